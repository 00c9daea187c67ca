"""``ChatEngine``: one conversation turn through the supervisor graph, as a result or as a
stream of events. The engine is stateless between turns: the caller loads the conversation
(``ConversationState``) and persists what the turn returns (reply, agent, assigned agent)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any, cast

from ragchat.agents import companion, conversational_rag, corrective_rag, rag, support
from ragchat.agents.config import AgentConfig, AgentKind
from ragchat.agents.deps import AgentDeps
from ragchat.agents.offline import make_title
from ragchat.agents.shared.state import AgentGraph
from ragchat.agents.supervisor import build_graph as build_supervisor
from ragchat.agents.supervisor import prompts as supervisor_prompts
from ragchat.agents.types import (
    ConversationState,
    InvalidMessage,
    TurnEvent,
    TurnOptions,
    TurnResult,
    UnknownAgent,
)
from ragchat.errors import LLMError, RagchatError
from ragchat.llm.base import Message

GraphBuilder = Callable[[AgentDeps, AgentConfig], AgentGraph]
BUILDERS: dict[AgentKind, GraphBuilder] = {
    "support": support.build_graph,
    "rag": rag.build_graph,
    "corrective_rag": corrective_rag.build_graph,
    "conversational_rag": conversational_rag.build_graph,
    "companion": companion.build_graph,
}
TITLE_WORDS = 6


class ChatEngine:
    """Compiles every configured agent's graph and the supervisor once; turns share them."""

    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps
        self.agent_graphs: dict[str, AgentGraph] = {
            name: BUILDERS[agent.kind](deps, agent)
            for name, agent in deps.app_config.agents.items()
        }
        self.graph = build_supervisor(deps, self.agent_graphs)

    @property
    def agents(self) -> dict[str, AgentConfig]:
        return self.deps.app_config.agents

    def warm_up(self) -> dict[str, str]:
        """Embeds the router's agent cards and opens every agent's knowledge bases now rather
        than on the first turn; returns ``{agent: problem}`` for agents that cannot run."""
        _ = self.deps.router
        problems: dict[str, str] = {}
        for name, agent in self.agents.items():
            for kb in {agent.knowledge_base, agent.persona_knowledge_base} - {None}:
                try:
                    self.deps.retriever(agent, kb)
                except RagchatError as exc:
                    problems[name] = str(exc)
        return problems

    def _input(
        self,
        conversation: ConversationState,
        message: str,
        user_id: str,
        options: TurnOptions | None,
    ) -> dict[str, Any]:
        if not message.strip():
            raise InvalidMessage("the message is empty")
        opts = options or TurnOptions()
        if opts.agent is not None and opts.agent not in self.agents:
            raise UnknownAgent(
                f"unknown agent {opts.agent!r}; configured: {', '.join(sorted(self.agents))}"
            )
        return {
            "message": message.strip(),
            "user_id": user_id,
            "conversation_id": conversation.conversation_id,
            "history": list(conversation.history),
            "user_profile": dict(conversation.user_profile),
            "options": opts.to_dict(),
            "assigned_agent": conversation.assigned_agent,
            "crisis_flagged": conversation.crisis,
        }

    def _result(self, out: dict[str, Any], start: float) -> TurnResult:
        timings = dict(out.get("timings", {}))
        timings["total"] = round((self.deps.clock() - start) * 1000.0, 3)
        metadata = {**out.get("metadata", {}), "timings": timings}
        return TurnResult(
            reply=out.get("reply", ""),
            agent=out.get("agent", ""),
            citations=list(out.get("citations", [])),
            metadata=metadata,
            bubbles=out.get("bubbles"),
            no_answer=bool(out.get("no_answer", False)),
        )

    async def run_turn(
        self,
        *,
        conversation: ConversationState,
        message: str,
        user_id: str,
        options: TurnOptions | None = None,
    ) -> TurnResult:
        start = self.deps.clock()
        out = await self.graph.ainvoke(self._input(conversation, message, user_id, options))
        return self._result(out, start)

    async def stream_turn(
        self,
        *,
        conversation: ConversationState,
        message: str,
        user_id: str,
        options: TurnOptions | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        """Events: ``metadata`` (agent, routing) → ``token`` deltas (joining to the reply) →
        ``citations`` → ``final`` (``TurnResult.to_dict()`` and timings).

        Closing the iterator early (a client disconnect) closes the graph stream, which
        cancels the running nodes and any model request in flight."""
        start = self.deps.clock()
        payload = self._input(conversation, message, user_id, options)
        final: dict[str, Any] = {}
        pace = self.deps.settings.llm.stream_pace_ms / 1000.0
        paced_before = False
        stream = cast(
            AsyncGenerator[tuple[tuple[str, ...], str, Any], None],
            self.graph.astream(payload, stream_mode=["custom", "values"], subgraphs=True),
        )
        async with aclosing(stream) as events:
            async for namespace, mode, chunk in events:
                if mode == "custom" and isinstance(chunk, dict):
                    if chunk.get("paced"):
                        chunk = {k: v for k, v in chunk.items() if k != "paced"}
                        if paced_before and pace > 0:
                            await asyncio.sleep(pace)
                        paced_before = True
                    yield chunk
                elif mode == "values" and not namespace:
                    final = chunk
        result = self._result(final, start)
        yield {"type": "citations", "citations": [c.to_dict() for c in result.citations]}
        yield {"type": "final", "result": result.to_dict(), "timings": result.metadata["timings"]}

    async def title(self, first_user: str, first_reply: str = "") -> str:
        """A short conversation title: the model's, else the offline ``make_title``."""
        model = self.deps.chat_model
        if model is not None:
            messages = [
                Message("system", supervisor_prompts.TITLE),
                Message("user", f"User: {first_user}\nAssistant: {first_reply[:500]}"),
            ]
            try:
                result = await model.generate(messages, options=self.deps.options("router"))
                lines = result.content.strip().strip("\"'").splitlines()
                title = " ".join(lines[0].split()[: TITLE_WORDS + 2]) if lines else ""
                if title:
                    return title.strip("\"'.")
            except LLMError:
                pass
        return make_title(first_user, first_reply, max_words=TITLE_WORDS)
