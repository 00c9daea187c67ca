"""``RetrieverCache``: the knowledge bases and retrievers the agents search, opened on first
use and kept, and who may see what in them.

Opening lazily means a deployment whose tutor KB is missing still serves its other agents. The
cache is the only mutable part of an engine, and it only ever adds entries (under a lock)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from ragchat.agents.config import AgentConfig
from ragchat.agents.rerankers import kb_retriever
from ragchat.embed.base import Embedder
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.llm.base import ChatModel
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.settings import Settings
from ragchat.tenancy.documents import DocumentVisibility
from ragchat.types import ExcludeResolved, RetrievalResult
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import SearchableKB

KBOpener = Callable[[str], SearchableKB]


class RetrieverCache:
    """``opener`` opens a knowledge base by name (default: the configured vector store's, see
        ``index.stores``; the server passes its shared registry, so uploads are searchable at
        once). ``visibility`` (tenancy: which documents each person may see, and under which name)
    None: every document is visible to everyone (the CLI, eval)."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder,
        chat_model: ChatModel | None = None,
        *,
        opener: KBOpener | None = None,
        visibility: DocumentVisibility | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.chat_model = chat_model
        self._opener = opener
        self._visibility = visibility
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
            return stores.open_kb(self.settings, name, self.embedder)
        except KnowledgeBaseNotFound as exc:
            raise KnowledgeBaseNotFound(
                f"{exc} (looked in {stores.where_knowledge_bases_live(self.settings)}). Ingest it "
                f"first: `ragchat ingest <folder> --kb {name}` (`ragchat chat` ingests the "
                "configured sample knowledge bases itself)"
            ) from exc

    @staticmethod
    def kb_name(agent: AgentConfig, kb: str | None = None) -> str:
        """``kb``, else the agent's own knowledge base, else its persona's."""
        name = kb or agent.knowledge_base or agent.persona_knowledge_base
        if not name:
            raise KnowledgeBaseNotFound(
                f"agent {agent.name!r} has no knowledge base of its own: bind the "
                "conversation to one (kb)"
            )
        return name

    def visibility(
        self, agent: AgentConfig, kb: str | None, user_id: str
    ) -> dict[str, ExcludeResolved]:
        """The search filter that keeps ``user_id`` to documents they may see, resolved by the
        knowledge base against the state each search runs on (uploads race with queries)."""
        visibility = self._visibility
        if visibility is None:
            return {}
        name = self.kb_name(agent, kb)
        return {"doc_id": ExcludeResolved(lambda base: visibility.hidden(name, user_id, base))}

    def as_seen_by(
        self, agent: AgentConfig, kb: str | None, user_id: str, result: RetrievalResult
    ) -> RetrievalResult:
        """``result`` with each hit named as ``user_id`` knows its document, so that sharing
        identical uploads never shows them another user's file name (in the prompt, the
        citations or the reply)."""
        if self._visibility is None or not result.hits:
            return result
        labels = self._visibility.labels(self.kb_name(agent, kb), user_id)
        if not labels:
            return result
        hits = []
        for hit in result.hits:
            label = labels.get(hit.chunk.doc_id)
            if label is not None:
                hit = dataclasses.replace(hit, chunk=hit.chunk.named(label))
            hits.append(hit)
        return dataclasses.replace(result, hits=hits)

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
        built = kb_retriever(self.settings, base, config, chat_model=self.chat_model)
        with self._lock:
            return self._retrievers.setdefault(key, built)
