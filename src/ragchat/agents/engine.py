"""``ChatEngine``: one conversation turn through the supervisor graph, as a ``TurnResult`` or as
a stream of typed events. The engine is stateless between turns: the caller loads the
conversation (``ConversationState``) and persists what the turn returns (reply, agent, the
assigned agent and user profile in ``result.metadata``). It needs no server: build it with
``build_engine`` and drive it from plain Python."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any, cast

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.events import CitationsEvent, FinalEvent, MetadataEvent, TokenEvent, TurnEvent
from ragchat.agents.kinds import get_kind
from ragchat.agents.request import TurnRequest, validate
from ragchat.agents.shared.pinpoint import pinpoint
from ragchat.agents.shared.state import AgentRunner, CompiledGraph
from ragchat.agents.supervisor import build_graph as build_supervisor
from ragchat.agents.supervisor.state import SupervisorState
from ragchat.agents.supervisor.steps import AgentRouter, TitleRequest, titler
from ragchat.agents.types import Turn, TurnResult
from ragchat.agents.wiring import AgentWiring
from ragchat.embed.base import Embedder
from ragchat.errors import InvalidInput, RagchatError
from ragchat.llm.base import ChatModel, HoldsConnections

GraphChunk = tuple[tuple[str, ...], str, Any]  # (namespace, stream mode, payload)


class ChatEngine:
    """Builds every configured agent (by its registered kind) and the supervisor once; turns
    share them. ``wiring`` is fixed for the engine's life."""

    def __init__(self, wiring: AgentWiring) -> None:
        self.wiring = wiring
        runners: dict[str, AgentRunner] = {
            name: get_kind(agent.kind).build(wiring, agent)
            for name, agent in wiring.app_config.agents.items()
        }
        self._router = AgentRouter(wiring.embedder, wiring.app_config)
        self._graph: CompiledGraph = build_supervisor(wiring, runners, self._router)
        self._titler = titler(wiring)

    # -- what callers may read ----------------------------------------------------------------
    @property
    def agents(self) -> dict[str, AgentConfig]:
        return self.wiring.app_config.agents

    @property
    def app_config(self) -> AppConfig:
        return self.wiring.app_config

    @property
    def chat_model(self) -> ChatModel | None:
        return self.wiring.chat_model

    @property
    def embedder(self) -> Embedder:
        return self.wiring.embedder

    def warm_up(self) -> dict[str, str]:
        """Embeds the router's agent cards and opens every agent's knowledge bases now rather
        than on the first turn; returns ``{agent: problem}`` for agents that cannot run."""
        _ = self._router.router
        problems: dict[str, str] = {}
        for name, agent in self.agents.items():
            for kb in {agent.knowledge_base, agent.persona_knowledge_base} - {None}:
                try:
                    self.wiring.knowledge.retriever(agent, kb)
                except RagchatError as exc:
                    problems[name] = str(exc)
        return problems

    async def aclose(self) -> None:
        """Closes the chat model's connections (call it on the loop that used them)."""
        model = self.wiring.chat_model
        if isinstance(model, HoldsConnections):
            await model.aclose()

    # -- turns --------------------------------------------------------------------------------
    def validate(self, request: TurnRequest) -> TurnRequest:
        """The one check of a turn's input (``request.validate``); call it before storing
        anything, the turn then runs without checking again."""
        return validate(request, self.agents)

    def _turn(self, request: TurnRequest) -> Turn:
        request = self.validate(request)
        opts = request.options
        forced = self.agents.get(opts.agent or "")
        if (
            forced is not None
            and forced.any_knowledge_base
            and not forced.knowledge_base
            and not opts.searched
        ):
            raise InvalidInput(
                f"agent {forced.name!r} answers from a knowledge base of yours: say which one (kb)"
            )
        conversation = request.conversation
        return Turn(
            message=request.message,
            user_id=request.user_id,
            conversation_id=conversation.conversation_id,
            history=tuple(conversation.history),
            user_profile=conversation.user_profile,
            options=opts,
            assigned_agent=conversation.assigned_agent,
            crisis_flagged=conversation.crisis,
        )

    def _result(self, values: dict[str, Any], start: float) -> TurnResult:
        result = SupervisorState(**values).result
        assert result is not None  # ``finalize`` always runs last
        total = round((self.wiring.clock() - start) * 1000.0, 3)
        timings = {**result.metadata.timings, "total": total}
        return replace(
            result,
            citations=pinpoint(result.reply, result.citations),
            metadata=replace(result.metadata, timings=timings),
        )

    async def run_turn(self, request: TurnRequest) -> TurnResult:
        start = self.wiring.clock()
        turn = self._turn(request)
        values = await self._graph.ainvoke(SupervisorState(turn=turn))
        return self._result(values, start)

    async def stream_turn(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        """``MetadataEvent`` (agent, routing) → ``TokenEvent`` deltas (joining to the reply)
        → ``CitationsEvent`` → ``FinalEvent`` (the ``TurnResult``, timings included).

        Closing the iterator early (a client disconnect) closes the graph stream, which
        cancels the running nodes and any model request in flight."""
        start = self.wiring.clock()
        turn = self._turn(request)
        final: dict[str, Any] = {}
        pace = self.wiring.settings.llm.stream_pace_ms / 1000.0
        paced_before = False
        stream = cast(
            AsyncGenerator[GraphChunk, None],
            self._graph.astream(
                SupervisorState(turn=turn), stream_mode=["custom", "values"], subgraphs=True
            ),
        )
        async with aclosing(stream) as chunks:
            async for namespace, mode, payload in chunks:
                if isinstance(payload, TokenEvent):
                    if payload.paced:
                        if paced_before and pace > 0:
                            await asyncio.sleep(pace)
                        paced_before = True
                    yield payload
                elif isinstance(payload, MetadataEvent):
                    yield payload
                elif mode == "values" and not namespace:
                    final = payload
        result = self._result(final, start)
        yield CitationsEvent(tuple(result.citations))
        yield FinalEvent(result)

    async def coverage(
        self, question: str, probes: Sequence[tuple[str, str]], user_id: str
    ) -> list[float]:
        """How well each (agent, knowledge base) covers ``question``: the relevance the
        agent's search of that knowledge base gives it (the best cosine its gate looks at;
        0.0 without a hit), over the documents ``user_id`` may see. Searches run in worker
        threads, as a turn's do."""
        knowledge = self.wiring.knowledge

        def one(agent_name: str, kb: str) -> float:
            agent = self.agents[agent_name]
            filters = dict(knowledge.visibility(agent, kb, user_id))
            result = knowledge.retriever(agent, kb).retrieve(question, filters=filters or None)
            return result.relevance if result.hits else 0.0

        return list(await asyncio.gather(*(asyncio.to_thread(one, a, kb) for a, kb in probes)))

    async def title(self, first_user: str, first_reply: str = "") -> str:
        """A short conversation title: the model's, else the heuristic ``make_title``."""
        return await self._titler.run(TitleRequest(first_user, first_reply))
