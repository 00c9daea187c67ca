"""The supervisor's steps: routing a first message (the model's structured choice, or the
embedding router) and titling a conversation (the model's title, or ``make_title``).

The embedding router also runs beside a model, on every later message, to notice a clear
change of topic (``routing.should_reassign``); ``AgentRouter`` builds it once for both."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragchat.agents.config import AgentConfig, AppConfig, SupervisorConfig
from ragchat.agents.heuristics import AgentCard, EmbeddingRouter, RouteDecision, make_title
from ragchat.agents.metadata import Routing
from ragchat.agents.shared.prompting import history_text
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.supervisor import prompts
from ragchat.agents.supervisor.routing import agents_list
from ragchat.agents.supervisor.state import RouteChoice
from ragchat.agents.turn_vectors import lending, turn_vectors
from ragchat.agents.types import Turn
from ragchat.agents.wiring import AgentWiring
from ragchat.embed.base import Embedder
from ragchat.errors import LLMError, LLMOutputError
from ragchat.llm.base import ChatModel, Message
from ragchat.types import HistoryMessage


@dataclass(frozen=True)
class RouteRequest:
    message: str
    history: tuple[HistoryMessage, ...] = ()
    turn: Turn | None = None  # whose ``embedding`` of ``message`` the router reuses


@dataclass(frozen=True)
class TitleRequest:
    first_user: str
    first_reply: str = ""


Router = Step[RouteRequest, Routing]
Titler = Step[TitleRequest, str]


class AgentRouter:
    """The embedding router over the routable agents (or the ``agents`` given), built (cards
    embedded) on first use."""

    def __init__(
        self,
        embedder: Embedder,
        app_config: AppConfig,
        agents: Sequence[AgentConfig] | None = None,
    ) -> None:
        self.embedder = embedder
        chosen = app_config.routable() if agents is None else agents
        self.cards = [AgentCard(a.name, a.description, tuple(a.examples)) for a in chosen]
        self._router: EmbeddingRouter | None = None
        self._lock = threading.Lock()

    @property
    def router(self) -> EmbeddingRouter:
        with self._lock:
            if self._router is None:
                self._router = EmbeddingRouter(turn_vectors(self.embedder), self.cards)
            return self._router

    def route(
        self, message: str, history: tuple[HistoryMessage, ...] = (), turn: Turn | None = None
    ) -> RouteDecision:
        """``turn``: the message's vector is the turn's (``Turn.embedding``)."""
        router = self.router
        with lending(turn):
            return router.route(message, history)


class ModelRouter:
    def __init__(self, model: ChatModel, wiring: AgentWiring) -> None:
        self.model = model
        routable = wiring.app_config.routable()
        self.names = {a.name.lower(): a.name for a in routable}
        self.system = prompts.ROUTER.replace(
            "{agents}", agents_list([(a.name, a.description) for a in routable])
        )
        self.options = wiring.options("router")
        self.history = wiring.tuning.prompt_history_messages

    async def run(self, request: RouteRequest) -> Routing:
        conversation = history_text(request.history, self.history)
        messages = [
            Message("system", self.system),
            Message("user", f"Conversation so far:\n{conversation}\n\nMessage: {request.message}"),
        ]
        choice = await self.model.structured(messages, RouteChoice, options=self.options)
        name = self.names.get(choice.agent.strip().lower())
        if name is None:
            raise LLMOutputError(f"the router named an unknown agent {choice.agent!r}")
        return Routing(name, choice.reasoning, choice.confidence, reassigned=False, router="llm")


class EmbeddingRouting:
    """The heuristic: the embedding router's best agent; below ``min_confidence`` the
    configured default agent, if any (the metadata says the confidence was low)."""

    def __init__(self, router: AgentRouter, supervisor: SupervisorConfig) -> None:
        self.router = router
        self.supervisor = supervisor

    async def run(self, request: RouteRequest) -> Routing:
        decision = self.router.route(request.message, request.history, request.turn)
        low = decision.confidence < self.supervisor.min_confidence
        agent = self.supervisor.default_agent if low and self.supervisor.default_agent else None
        return Routing(
            agent or decision.agent,
            decision.reasoning,
            decision.confidence,
            reassigned=False,
            router="embedding",
            low_confidence=low,
            scores=dict(decision.scores),
        )


def first_router(wiring: AgentWiring, router: AgentRouter) -> Router:
    def noted(routing: Routing, error: LLMError) -> Routing:
        return replace(routing, fallback=str(error))

    return choose(
        "supervisor: route",
        wiring.chat_model,
        lambda model: ModelRouter(model, wiring),
        EmbeddingRouting(router, wiring.app_config.supervisor),
        note=noted,
    )


class ModelTitler:
    def __init__(self, model: ChatModel, wiring: AgentWiring) -> None:
        self.model = model
        self.options = wiring.options("router")
        self.words = wiring.tuning.title_words

    async def run(self, request: TitleRequest) -> str:
        messages = [
            Message("system", prompts.TITLE),
            Message("user", f"User: {request.first_user}\nAssistant: {request.first_reply[:500]}"),
        ]
        result = await self.model.generate(messages, options=self.options)
        lines = result.content.strip().strip("\"'").splitlines()
        title = " ".join(lines[0].split()[: self.words + 2]) if lines else ""
        if not title:
            raise LLMOutputError("the model wrote no title")
        return title.strip("\"'.")


class HeuristicTitler:
    def __init__(self, words: int) -> None:
        self.words = words

    async def run(self, request: TitleRequest) -> str:
        return make_title(request.first_user, request.first_reply, max_words=self.words)


def titler(wiring: AgentWiring) -> Titler:
    return choose(
        "supervisor: title",
        wiring.chat_model,
        lambda model: ModelTitler(model, wiring),
        HeuristicTitler(wiring.tuning.title_words),
    )
