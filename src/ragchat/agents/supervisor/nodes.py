"""Supervisor nodes: safety first, then routing, then the agent's own graph.

The first message of a conversation is routed by the model (structured ``RouteChoice``) or,
offline and whenever the model fails or names an unknown agent, by the embedding router.
Later messages stay with the assigned agent unless ``routing.py``'s rule reassigns them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from langgraph.config import get_stream_writer

from ragchat.agents.deps import AgentDeps
from ragchat.agents.shared.llm import emit, history_text
from ragchat.agents.shared.state import (
    AGENT_INPUT_FIELDS,
    AGENT_OUTPUT_FIELDS,
    AgentGraph,
    Update,
)
from ragchat.agents.shared.timing import timed
from ragchat.agents.supervisor import prompts
from ragchat.agents.supervisor.routing import (
    agents_list,
    routing_record,
    should_reassign,
    split_switch,
)
from ragchat.agents.supervisor.state import (
    SAFETY_AGENT,
    SUPERVISOR_AGENT,
    RouteChoice,
    SupervisorState,
)
from ragchat.agents.types import HistoryMessage
from ragchat.errors import LLMError, LLMOutputError
from ragchat.llm.base import Message
from ragchat.safety.crisis import after_crisis, turn_is_crisis

log = logging.getLogger(__name__)
CRISIS_CATEGORY = "self_harm"


def _announce(agent: str, routing: dict[str, Any]) -> None:
    get_stream_writer()({"type": "metadata", "agent": agent, "routing": routing})


class SupervisorNodes:
    def __init__(self, deps: AgentDeps, agents: dict[str, AgentGraph]) -> None:
        self.deps = deps
        self.agents = agents
        self.sup = deps.app_config.supervisor

    # -- safety ---------------------------------------------------------------------------------
    @timed("safety")
    async def safety(self, state: SupervisorState) -> Update:
        guard = self.deps.safety
        if guard is None:
            return {"metadata": {"safety": {"checked": False}}}
        history = [(m.role, m.content) for m in state.history if m.role in ("user", "assistant")]
        verdict = await guard.classify(state.message, history)
        verdict = after_crisis(verdict, state.message, state.crisis_flagged)
        category = getattr(verdict, "category", None)
        crisis = category == CRISIS_CATEGORY
        blocked = not verdict.safe or crisis
        info = {
            "checked": True,
            "safe": bool(verdict.safe),
            "category": category,
            "code": getattr(verdict, "code", None),
            "score": getattr(verdict, "score", None),
            "crisis": crisis,
        }
        refusal = guard.refusal_for(verdict) if blocked else ""
        return {"blocked": blocked, "refusal": refusal, "metadata": {"safety": info}}

    def after_safety(self, state: SupervisorState) -> Literal["refuse", "route"]:
        return "refuse" if state.blocked else "route"

    @timed("refuse")
    async def refuse(self, state: SupervisorState) -> Update:
        category = state.metadata.get("safety", {}).get("category")
        routing = routing_record(
            SAFETY_AGENT,
            f"blocked by the safety check (category: {category or 'unspecified'})",
            1.0,
            reassigned=False,
            router="safety",
        )
        _announce(SAFETY_AGENT, routing)
        emit(state.refusal)
        return {
            "agent": SAFETY_AGENT,
            "routing": routing,
            "reply": state.refusal,
            "metadata": {"category": category},
        }

    # -- routing --------------------------------------------------------------------------------
    async def _first_route(self, message: str, history: Sequence[HistoryMessage]) -> dict[str, Any]:
        """Model routing with the embedding router as fallback; offline, the router alone."""
        fallback_reason = ""
        if self.deps.chat_model is not None:
            try:
                choice = await self._llm_route(message, history)
                return routing_record(
                    choice.agent,
                    choice.reasoning,
                    choice.confidence,
                    reassigned=False,
                    router="llm",
                )
            except LLMError as exc:  # includes LLMOutputError (malformed output)
                log.warning("model routing failed (%s); using the embedding router", exc)
                fallback_reason = str(exc)
        decision = self.deps.router.route(message, history)
        agent, low = decision.agent, decision.confidence < self.sup.min_confidence
        if low and self.sup.default_agent:
            agent = self.sup.default_agent
        extra: dict[str, Any] = {"low_confidence": low, "scores": dict(decision.scores)}
        if fallback_reason:
            extra["fallback"] = fallback_reason
        return routing_record(
            agent,
            decision.reasoning,
            decision.confidence,
            reassigned=False,
            router="embedding",
            **extra,
        )

    async def _llm_route(self, message: str, history: Sequence[HistoryMessage]) -> RouteChoice:
        assert self.deps.chat_model is not None
        routable = {a.name.lower(): a.name for a in self.deps.app_config.routable()}
        cards = [(a.name, a.description) for a in self.deps.app_config.routable()]
        messages = [
            Message("system", prompts.ROUTER.replace("{agents}", agents_list(cards))),
            Message(
                "user",
                f"Conversation so far:\n{history_text(history)}\n\nMessage: {message}",
            ),
        ]
        choice = await self.deps.chat_model.structured(
            messages, RouteChoice, options=self.deps.options("router")
        )
        name = routable.get(choice.agent.strip().lower())
        if name is None:
            raise LLMOutputError(f"the router named an unknown agent {choice.agent!r}")
        return choice.model_copy(update={"agent": name})

    async def _route(self, state: SupervisorState) -> tuple[dict[str, Any], str]:
        """(routing record, the message the agent should see)."""
        message = state.message
        current = state.assigned_agent if state.assigned_agent in self.agents else None
        forced = state.options.get("agent")
        if forced:
            changed = current is not None and forced != current
            return self._record(
                forced, "agent requested explicitly", 1.0, changed, "forced"
            ), message
        if current is None:
            return await self._first_route(message, state.history), message
        remainder = split_switch(message, self.sup.switch_phrases)
        if remainder == "":
            return self._record(
                SUPERVISOR_AGENT, "switch phrase, no topic", 1.0, True, "switch"
            ), message
        if remainder is not None:  # a fresh start: the old conversation does not bias routing
            record = await self._first_route(remainder, ())
            record.update(reassigned=record["agent"] != current, switch_phrase=True)
            return record, remainder
        decision = self.deps.router.route(message, state.history)
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
            record = self._record(decision.agent, reasoning, decision.confidence, True, "embedding")
            return {**record, "scores": scores}, message
        confidence = decision.confidence if decision.agent == current else 0.0
        reasoning = f"session-sticky: the conversation is assigned to {current}"
        return {
            **self._record(current, reasoning, confidence, False, "sticky"),
            "scores": scores,
        }, message

    @staticmethod
    def _record(
        agent: str, reasoning: str, confidence: float, reassigned: bool, router: str
    ) -> dict[str, Any]:
        return routing_record(agent, reasoning, confidence, reassigned=reassigned, router=router)

    @timed("route")
    async def route(self, state: SupervisorState) -> Update:
        routing, message = await self._route(state)
        agent = routing["agent"]
        if agent not in self.agents and agent != SUPERVISOR_AGENT:
            raise LLMOutputError(f"routing chose unknown agent {agent!r}")  # pragma: no cover
        _announce(agent, routing)
        return {"agent": agent, "agent_message": message, "routing": routing}

    def after_route(self, state: SupervisorState) -> Literal["dispatch", "ask_topic"]:
        return "ask_topic" if state.agent == SUPERVISOR_AGENT else "dispatch"

    @timed("ask_topic")
    async def ask_topic(self, state: SupervisorState) -> Update:
        cards = [(a.name, a.description) for a in self.deps.app_config.routable()]
        reply = prompts.ASK_TOPIC.replace("{agents}", agents_list(cards))
        emit(reply)
        return {"reply": reply}

    # -- the agent ------------------------------------------------------------------------------
    @timed("dispatch")
    async def dispatch(self, state: SupervisorState) -> Update:
        graph = self.agents[state.agent]
        payload = {k: getattr(state, k) for k in AGENT_INPUT_FIELDS}
        payload["message"] = state.agent_message or state.message
        out = await graph.ainvoke(payload)
        update = {k: out[k] for k in AGENT_OUTPUT_FIELDS if k in out}
        update["timings"] = {f"{state.agent}.{k}": v for k, v in out.get("timings", {}).items()}
        return update

    async def finalize(self, state: SupervisorState) -> Update:
        agent = state.agent
        if agent == SAFETY_AGENT:
            assigned = state.assigned_agent
        elif agent == SUPERVISOR_AGENT:
            assigned = None
        else:
            assigned = agent
        crisis = state.crisis_flagged or turn_is_crisis(state.metadata)
        return {
            "metadata": {
                "routing": state.routing,
                "assigned_agent": assigned,
                "conversation_crisis": crisis,
            }
        }
