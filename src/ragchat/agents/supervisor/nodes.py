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
from ragchat.agents.metadata import CrisisTrace, Routing, SafetyCheck, TurnMetadata
from ragchat.agents.shared.state import AgentRunner, Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.supervisor import prompts
from ragchat.agents.supervisor.routing import agents_list, should_reassign, split_switch
from ragchat.agents.supervisor.state import SAFETY_AGENT, SUPERVISOR_AGENT, SupervisorState
from ragchat.agents.supervisor.steps import AgentRouter, Router, RouteRequest
from ragchat.agents.turn_vectors import lending
from ragchat.agents.types import Turn, TurnResult
from ragchat.agents.wiring import AgentWiring
from ragchat.errors import ConfigError, LLMOutputError
from ragchat.safety.crisis import after_crisis

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
        kb_agents = wiring.app_config.kb_agents()
        self.kb_agents = [a.name for a in kb_agents]
        # Chooses among the agents that answer over a conversation's knowledge bases, only
        # when there are several (built on first use).
        self.kb_router = AgentRouter(wiring.embedder, wiring.app_config, kb_agents)

    # -- safety ---------------------------------------------------------------------------------
    @timed("safety")
    async def safety(self, state: SupervisorState) -> Update:
        guard = self.wiring.safety
        if guard is None:
            return {"safety": SafetyCheck(checked=False)}
        turn = state.turn
        history = [(m.role, m.content) for m in turn.history if m.role in ("user", "assistant")]
        with lending(turn):  # an embedding classifier reuses the turn's message vector
            verdict = await guard.classify(turn.message, history)
        verdict = after_crisis(verdict, turn.message, turn.crisis_flagged)
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
        if current is not None and not turn.options.kbs and self._needs_kbs(current):
            current = None  # unbound from its knowledge bases: route the message afresh
        forced = turn.options.agent
        if forced:
            changed = current is not None and forced != current
            return Routing(forced, "agent requested explicitly", 1.0, changed, "forced"), message
        if turn.options.kbs:
            return self._route_kb(turn, current), message
        if current is None:
            return await self.first_route.run(RouteRequest(message, turn.history, turn)), message
        remainder = split_switch(message, self.sup.switch_phrases)
        if remainder == "":
            ask = Routing(SUPERVISOR_AGENT, "switch phrase, no topic", 1.0, True, "switch")
            return ask, message
        if remainder is not None:  # a fresh start: the old conversation does not bias routing
            routing = await self.first_route.run(RouteRequest(remainder))
            moved = routing.agent != current
            return replace(routing, reassigned=moved, switch_phrase=True), remainder
        decision = self.router.route(message, turn.history, turn)
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

    def _needs_kbs(self, name: str) -> bool:
        agent = self.wiring.app_config.agents[name]
        return agent.any_knowledge_base and not agent.knowledge_base

    def _route_kb(self, turn: Turn, current: str | None) -> Routing:
        """A conversation bound to knowledge bases is answered by an agent that can answer
        over any of them: the knowledge base's own choice, else the conversation's agent when
        it is one of them, else the only one, else the embedding router's pick among them."""
        candidates = self.kb_agents
        if not candidates:
            raise ConfigError(
                "no agent answers over a conversation's knowledge bases: set "
                "any_knowledge_base = true on a knowledge-base agent in the agents config"
            )
        chosen = turn.options.kb_agent
        if chosen in candidates:
            moved = current is not None and chosen != current
            return Routing(chosen, "the knowledge base's agent", 1.0, moved, "knowledge_base")
        if current in candidates:
            reasoning = f"session-sticky: the conversation is assigned to {current}"
            return Routing(current, reasoning, 1.0, False, "sticky")
        if len(candidates) == 1:
            reasoning = "the agent for the conversation's knowledge bases"
            return Routing(candidates[0], reasoning, 1.0, current is not None, "knowledge_base")
        decision = self.kb_router.route(turn.message, turn.history, turn)
        return Routing(
            decision.agent,
            decision.reasoning,
            decision.confidence,
            current is not None,
            "embedding",
            scores=dict(decision.scores),
        )

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
        # Once self-harm intent is seen (the safety stage, or an agent's own check such as
        # support's), the conversation stays flagged: the caller persists it.
        own_check = out is not None and isinstance(out.trace, CrisisTrace) and out.trace.crisis
        metadata = TurnMetadata(
            routing=routing,
            assigned_agent=assigned,
            conversation_crisis=state.turn.crisis_flagged or state.safety.crisis or own_check,
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
