"""``RetrieverCache``: the knowledge bases and retrievers the agents search, opened on first
use and kept, and who may see what in them.

Opening lazily means a deployment whose tutor KB is missing still serves its other agents. The
cache is the only mutable part of an engine, and it only ever adds entries (under a lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from ragchat.agents.config import AgentConfig
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.index.base import Embedder, SearchableKB
from ragchat.index.kb import KnowledgeBase
from ragchat.llm.base import ChatModel
from ragchat.retrieve.factory import build_retriever
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.settings import Settings
from ragchat.types import Exclude

KBOpener = Callable[[str], SearchableKB]
# (knowledge base, user id) → ids of documents that user may not see (other people's uploads).
HiddenDocuments = Callable[[str, str], Sequence[str]]


class RetrieverCache:
    """``opener`` opens a knowledge base by name (default: ``KnowledgeBase.open`` under
    ``settings.kb_root``; the server passes its shared registry, so uploads are searchable at
    once). ``hidden_documents`` None: every document is visible to everyone (the CLI, eval)."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder,
        chat_model: ChatModel | None = None,
        *,
        opener: KBOpener | None = None,
        hidden_documents: HiddenDocuments | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.chat_model = chat_model
        self._opener = opener
        self._hidden = hidden_documents
        self._kbs: dict[str, SearchableKB] = {}
        self._retrievers: dict[tuple[str, str], KBRetriever] = {}
        self._lock = threading.Lock()

    def knowledge_base(self, name: str) -> SearchableKB:
        with self._lock:
            if name not in self._kbs:
                self._kbs[name] = self._open(name)
            return self._kbs[name]

    def _open(self, name: str) -> SearchableKB:
        if self._opener is not None:
            return self._opener(name)
        try:
            return KnowledgeBase.open(self.settings.kb_root, name, self.embedder)
        except KnowledgeBaseNotFound as exc:
            raise KnowledgeBaseNotFound(
                f"{exc}. Ingest it first: `ragchat ingest <folder> --kb {name}` "
                "(`ragchat chat` ingests the configured sample knowledge bases itself)"
            ) from exc

    @staticmethod
    def kb_name(agent: AgentConfig, kb: str | None = None) -> str:
        """``kb``, else the agent's own knowledge base, else its persona's."""
        name = kb or agent.knowledge_base or agent.persona_knowledge_base
        if not name:
            raise KnowledgeBaseNotFound(f"agent {agent.name!r} has no knowledge base")
        return name

    def visibility(self, agent: AgentConfig, kb: str | None, user_id: str) -> dict[str, Exclude]:
        """The search filter that keeps ``user_id`` to documents they may see."""
        if self._hidden is None:
            return {}
        hidden = self._hidden(self.kb_name(agent, kb), user_id)
        return {"doc_id": Exclude(tuple(hidden))} if hidden else {}

    def retriever(self, agent: AgentConfig, kb: str | None = None) -> KBRetriever:
        """The agent's retriever over ``kb`` (default: its own knowledge base), built once with
        the agent's retrieval settings over the global ones; its query expansion (when on) asks
        the chat model for variations, or uses pseudo-relevance feedback without one."""
        key = (agent.name, self.kb_name(agent, kb))
        with self._lock:
            found = self._retrievers.get(key)
        if found is not None:
            return found
        config = agent.retrieval_settings(self.settings.retrieval)
        base = self.knowledge_base(key[1])
        built = build_retriever(self.settings, base, config, chat_model=self.chat_model)
        with self._lock:
            return self._retrievers.setdefault(key, built)
