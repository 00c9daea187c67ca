"""Everything a graph node needs that is not data: models, retrievers, stores, the clock.

Injected into node factories at graph build time and never put in graph state, so state stays
plain serialisable data. Knowledge bases and retrievers are opened lazily on first use: a
deployment whose tutor KB is missing still serves its other agents."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import frontmatter

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.heuristics import AgentCard, EmbeddingRouter
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.index.base import Embedder, SearchableKB
from ragchat.index.kb import KnowledgeBase
from ragchat.llm.base import ChatModel, GenerationOptions
from ragchat.retrieve.factory import build_retriever
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.settings import Settings
from ragchat.store.memory import InMemoryMemoryStore, MemoryStore
from ragchat.types import Exclude


@runtime_checkable
class SafetyGuard(Protocol):
    """The safety stage as the supervisor sees it: a verdict with ``safe`` and ``category``
    (see ``ragchat.safety.base.SafetyVerdict``) and the message shown when it refuses."""

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> Any: ...

    def refusal_for(self, verdict: Any) -> str: ...


class SafetyAdapter:
    """Gives a bare ``SafetyClassifier`` the standard refusal messages."""

    def __init__(self, classifier: Any) -> None:
        self.classifier = classifier

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> Any:
        return await self.classifier.classify(text, history)

    def refusal_for(self, verdict: Any) -> str:
        from ragchat.safety.responses import refusal_for

        return refusal_for(verdict)


def as_guard(safety: Any | None) -> SafetyGuard | None:
    if safety is None or isinstance(safety, SafetyGuard):
        return safety
    return SafetyAdapter(safety)


@dataclass(frozen=True)
class Persona:
    name: str
    text: str


@dataclass
class AgentDeps:
    settings: Settings
    app_config: AppConfig
    embedder: Embedder
    chat_model: ChatModel | None = None  # None: the offline (extractive) path
    memory: MemoryStore | None = None  # None: an in-memory store over ``embedder``
    safety: SafetyGuard | None = None  # None: messages are not classified
    clock: Callable[[], float] = time.perf_counter
    # Opens a knowledge base by name; default ``KnowledgeBase.open`` under settings.kb_root.
    kb_opener: Callable[[str], SearchableKB] | None = None
    retrievers: dict[str, KBRetriever] = field(default_factory=dict)  # "agent@kb" → retriever
    # (knowledge base, user id) → ids of documents that user may not see (other people's
    # uploads); None: every document is visible to everyone (the CLI, evaluation).
    hidden_documents: Callable[[str, str], Sequence[str]] | None = None
    _kbs: dict[str, SearchableKB] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _router: EmbeddingRouter | None = field(default=None, repr=False)
    _personas: dict[str, Persona] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.memory is None:
            self.memory = InMemoryMemoryStore(self.embedder)
        self.safety = as_guard(self.safety)

    @property
    def offline(self) -> bool:
        return self.chat_model is None

    @property
    def memory_store(self) -> MemoryStore:
        assert self.memory is not None  # set in __post_init__
        return self.memory

    def options(self, node: str) -> GenerationOptions:
        return self.settings.llm.options_for(node)

    def agent(self, name: str) -> AgentConfig:
        return self.app_config.agents[name]

    # -- knowledge bases ----------------------------------------------------------------------
    def knowledge_base(self, name: str) -> SearchableKB:
        with self._lock:
            if name not in self._kbs:
                self._kbs[name] = self._open(name)
            return self._kbs[name]

    def _open(self, name: str) -> SearchableKB:
        if self.kb_opener is not None:
            return self.kb_opener(name)
        try:
            return KnowledgeBase.open(self.settings.kb_root, name, self.embedder)
        except KnowledgeBaseNotFound as exc:
            raise KnowledgeBaseNotFound(
                f"{exc}. Ingest it first: `ragchat ingest <folder> --kb {name}` "
                "(`ragchat chat` ingests the configured sample knowledge bases itself)"
            ) from exc

    def _kb_name(self, agent: AgentConfig, kb: str | None) -> str:
        kb_name = kb or agent.knowledge_base or agent.persona_knowledge_base
        if not kb_name:
            raise KnowledgeBaseNotFound(f"agent {agent.name!r} has no knowledge base")
        return kb_name

    def visibility(self, agent: AgentConfig, kb: str | None, user_id: str) -> dict[str, Exclude]:
        """The search filter that keeps ``user_id`` to documents they may see."""
        if self.hidden_documents is None:
            return {}
        hidden = self.hidden_documents(self._kb_name(agent, kb), user_id)
        return {"doc_id": Exclude(tuple(hidden))} if hidden else {}

    def retriever(self, agent: AgentConfig, kb: str | None = None) -> KBRetriever:
        """The agent's retriever over ``kb`` (default: its own knowledge base), built with the
        agent's retrieval settings over the global ones; its query expansion (when on) asks
        ``chat_model`` for variations, or uses pseudo-relevance feedback offline."""
        kb_name = self._kb_name(agent, kb)
        key = f"{agent.name}@{kb_name}"
        if key not in self.retrievers:
            config = agent.retrieval_settings(self.settings.retrieval)
            base = self.knowledge_base(kb_name)
            built = build_retriever(self.settings, base, config, chat_model=self.chat_model)
            self.retrievers.setdefault(key, built)
        return self.retrievers[key]

    # -- routing and personas -----------------------------------------------------------------
    @property
    def router(self) -> EmbeddingRouter:
        """The embedding router over routable agents (cards embedded once, on first use)."""
        if self._router is None:
            cards = [
                AgentCard(a.name, a.description, tuple(a.examples))
                for a in self.app_config.routable()
            ]
            self._router = EmbeddingRouter(self.embedder, cards)
        return self._router

    def persona(self, agent: AgentConfig) -> Persona:
        """The persona file: front matter ``name`` (else the agent name) and the body text."""
        if agent.name not in self._personas:
            raw = self.app_config.persona_text(agent)
            post = frontmatter.loads(raw) if raw else None
            name = str(post.metadata.get("name", "")) if post else ""
            text = post.content.strip() if post else agent.description
            self._personas[agent.name] = Persona(name or agent.name.title(), text)
        return self._personas[agent.name]
