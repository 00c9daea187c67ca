"""Supervisor nodes: safety first, then routing, then the agent's own graph, then the result.

The first message of a conversation is routed by the ``first_route`` step (the model's choice,
or the embedding router when there is no model or it fails). Later messages stay with the
assigned agent unless ``routing.py``'s rule reassigns them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from langgraph.config import get_stream_writer

from ragchat.agents.events import MetadataEvent
from ragchat.agents.metadata import Routing, SafetyCheck, TurnMetadata
from ragchat.agents.shared.state import AgentRunner, Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.supervisor import prompts
from ragchat.agents.supervisor.routing import agents_list, should_reassign, split_switch
from ragchat.agents.supervisor.state import SAFETY_AGENT, SUPERVISOR_AGENT, SupervisorState
from ragchat.agents.supervisor.steps import AgentRouter, Router, RouteRequest
from ragchat.agents.types import Turn, TurnResult
from ragchat.agents.wiring import AgentWiring
from ragchat.errors import LLMOutputError

CRISIS_CATEGORY = "self_harm"


def _announce(routing: Routing) -> None:
    get_stream_writer()(MetadataEvent(routing.agent, routing))


class SupervisorNodes:
    def __init__(
        self,
        wiring: AgentWiring,
        agents: Mapping[str, AgentRunner],
        router: AgentRouter,
        first_route: Router,
    ) -> None:
        self.wiring = wiring
        self.agents = agents
        self.router = router
        self.first_route = first_route
        self.sup = wiring.app_config.supervisor
        self.clock = wiring.clock

    # -- safety ---------------------------------------------------------------------------------
    @timed("safety")
    async def safety(self, state: SupervisorState) -> Update:
        guard = self.wiring.safety
        if guard is None:
            return {"safety": SafetyCheck(checked=False)}
        turn = state.turn
        history = [(m.role, m.content) for m in turn.history if m.role in ("user", "assistant")]
        verdict = await guard.classify(turn.message, history)
        check = SafetyCheck(
            checked=True,
            safe=bool(verdict.safe),
            category=verdict.category,
            code=verdict.code,
            score=verdict.score,
            crisis=verdict.category == CRISIS_CATEGORY,
        )
        refusal = guard.refusal_for(verdict) if check.blocked else ""
        return {"safety": check, "refusal": refusal}

    def after_safety(self, state: SupervisorState) -> Literal["refuse", "route"]:
        return "refuse" if state.safety.blocked else "route"

    @timed("refuse")
    async def refuse(self, state: SupervisorState) -> Update:
        category = state.safety.category
        routing = Routing(
            SAFETY_AGENT,
            f"blocked by the safety check (category: {category or 'unspecified'})",
            1.0,
            reassigned=False,
            router="safety",
        )
        _announce(routing)
        self.wiring.stream.whole(state.refusal)
        return {"routing": routing, "reply": state.refusal}

    # -- routing --------------------------------------------------------------------------------
    async def _route(self, turn: Turn) -> tuple[Routing, str]:
        """(the routing, the message the agent should see)."""
        message = turn.message
        current = turn.assigned_agent if turn.assigned_agent in self.agents else None
        forced = turn.options.agent
        if forced:
            changed = current is not None and forced != current
            return Routing(forced, "agent requested explicitly", 1.0, changed, "forced"), message
        if current is None:
            return await self.first_route.run(RouteRequest(message, turn.history)), message
        remainder = split_switch(message, self.sup.switch_phrases)
        if remainder == "":
            ask = Routing(SUPERVISOR_AGENT, "switch phrase, no topic", 1.0, True, "switch")
            return ask, message
        if remainder is not None:  # a fresh start: the old conversation does not bias routing
            routing = await self.first_route.run(RouteRequest(remainder))
            moved = routing.agent != current
            return replace(routing, reassigned=moved, switch_phrase=True), remainder
        decision = self.router.route(message, turn.history)
        scores = dict(decision.scores)
        if should_reassign(
            decision.agent,
            decision.confidence,
            scores,
            current,
            switch_confidence=self.sup.switch_confidence,
            margin=self.sup.switch_margin,
        ):
            reasoning = f"clear topic change: {decision.reasoning}"
            routing = Routing(decision.agent, reasoning, decision.confidence, True, "embedding")
            return replace(routing, scores=scores), message
        confidence = decision.confidence if decision.agent == current else 0.0
        reasoning = f"session-sticky: the conversation is assigned to {current}"
        return Routing(current, reasoning, confidence, False, "sticky", scores=scores), message

    @timed("route")
    async def route(self, state: SupervisorState) -> Update:
        routing, message = await self._route(state.turn)
        if routing.agent not in self.agents and routing.agent != SUPERVISOR_AGENT:
            unknown = f"routing chose unknown agent {routing.agent!r}"  # pragma: no cover
            raise LLMOutputError(unknown)  # pragma: no cover
        _announce(routing)
        return {"routing": routing, "agent_message": message}

    def after_route(self, state: SupervisorState) -> Literal["dispatch", "ask_topic"]:
        assert state.routing is not None
        return "ask_topic" if state.routing.agent == SUPERVISOR_AGENT else "dispatch"

    @timed("ask_topic")
    async def ask_topic(self, state: SupervisorState) -> Update:
        cards = [(a.name, a.description) for a in self.wiring.app_config.routable()]
        reply = prompts.ASK_TOPIC.replace("{agents}", agents_list(cards))
        self.wiring.stream.whole(reply)
        return {"reply": reply}

    # -- the agent ------------------------------------------------------------------------------
    @timed("dispatch")
    async def dispatch(self, state: SupervisorState) -> Update:
        assert state.routing is not None
        agent = state.routing.agent
        turn = replace(state.turn, message=state.agent_message or state.turn.message)
        outcome = await self.agents[agent].run(turn)
        timings = {f"{agent}.{step}": ms for step, ms in outcome.timings.items()}
        return {"outcome": outcome, "timings": timings}

    async def finalize(self, state: SupervisorState) -> Update:
        routing = state.routing
        assert routing is not None
        if routing.agent == SAFETY_AGENT:
            assigned = state.turn.assigned_agent
        elif routing.agent == SUPERVISOR_AGENT:
            assigned = None
        else:
            assigned = routing.agent
        out = state.outcome
        metadata = TurnMetadata(
            routing=routing,
            assigned_agent=assigned,
            safety=state.safety,
            search_query=out.search_query if out else None,
            retrieval=out.retrieval if out else None,
            gate=out.gate if out else None,
            user_profile=out.user_profile if out else None,
            trace=out.trace if out else None,
            timings=dict(state.timings),
        )
        result = TurnResult(
            reply=out.reply if out else state.reply,
            agent=routing.agent,
            metadata=metadata,
            citations=list(out.citations) if out else [],
            bubbles=None if out is None or out.bubbles is None else list(out.bubbles),
            no_answer=out.no_answer if out else False,
        )
        return {"result": result}
