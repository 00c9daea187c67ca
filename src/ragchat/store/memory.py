"""Long-term memory of past conversations, per user: snippets of what the user said, searched
by meaning. The companion's ``get_long_term_memory`` tool searches it; closing a session adds
to it (``api/services/sessions.py``).

Two implementations of one ``MemoryStore`` contract (tests/store/test_memory_contract.py):
``InMemoryMemoryStore`` for the CLI and tests, ``SqlMemoryStore`` over the store's memories
table for the server. Both drop snippets below ``min_score`` cosine, so an unrelated question
surfaces nothing."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import Conflict
from ragchat.settings import MemorySettings
from ragchat.store.base import Store

_DEFAULTS = MemorySettings()


@runtime_checkable
class MemoryStore(Protocol):
    def search(self, user_id: str, query: str, k: int = 3) -> list[str]:
        """Snippets of the user's past conversations most similar to ``query``, best first;
        only ``user_id``'s own, only those at least ``min_score`` similar."""
        ...

    def add(self, user_id: str, conversation_id: str, text: str) -> None:
        """Keeps ``text`` (whitespace collapsed; empty and already-kept snippets are skipped).
        ``conversation_id`` need not be stored anywhere (a stateless turn)."""
        ...


def _unit(vector: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _best(texts: list[str], matrix: Matrix, query: Vector, k: int, min_score: float) -> list[str]:
    scores = matrix @ query
    order = np.argsort(-scores)[:k]
    return [texts[i] for i in order if float(scores[i]) >= min_score]


@dataclass(frozen=True)
class _Memory:
    conversation_id: str
    text: str
    vector: Vector


class InMemoryMemoryStore:
    """Snippets kept in process memory (lost on exit), at most ``max_per_user`` per user."""

    @classmethod
    def from_settings(cls, embedder: Embedder, settings: MemorySettings) -> InMemoryMemoryStore:
        return cls(embedder, min_score=settings.min_score, max_per_user=settings.max_per_user)

    def __init__(
        self,
        embedder: Embedder,
        *,
        min_score: float = _DEFAULTS.min_score,
        max_per_user: int = _DEFAULTS.max_per_user,
    ) -> None:
        self.embedder = embedder
        self.min_score = min_score
        self.max_per_user = max_per_user
        self._items: dict[str, list[_Memory]] = {}
        self._lock = threading.Lock()

    def add(self, user_id: str, conversation_id: str, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        vector = self.embedder.embed_documents([text])[0]
        with self._lock:
            items = self._items.setdefault(user_id, [])
            if any(m.text == text for m in items):
                return
            items.append(_Memory(conversation_id, text, vector))
            del items[: max(0, len(items) - self.max_per_user)]

    def search(self, user_id: str, query: str, k: int = 3) -> list[str]:
        with self._lock:
            items = list(self._items.get(user_id, ()))
        if not items or not query.strip() or k < 1:
            return []
        matrix = np.stack([m.vector for m in items])
        query_vec = self.embedder.embed_query(query)
        return _best([m.text for m in items], matrix, query_vec, k, self.min_score)


class SqlMemoryStore:
    """Snippets in the store's memories table with a unit-length float32 embedding each;
    ``max_scan`` bounds how many of the user's most recent snippets a search compares."""

    @classmethod
    def from_settings(
        cls, store: Store, embedder: Embedder, settings: MemorySettings
    ) -> SqlMemoryStore:
        return cls(store, embedder, min_score=settings.min_score, max_scan=settings.max_scan)

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        min_score: float = _DEFAULTS.min_score,
        max_scan: int = _DEFAULTS.max_scan,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.min_score = min_score
        self.max_scan = max_scan

    def add(self, user_id: str, conversation_id: str, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        if any(m.text == text for m in self.store.list_memories(user_id, limit=self.max_scan)):
            return
        vector = np.asarray(self.embedder.embed_documents([text])[0], dtype=np.float32)
        blob = _unit(vector).tobytes()
        try:
            self.store.add_memory(user_id, text, conversation_id, blob)
        except Conflict:
            # The conversation is not stored (a stateless OpenAI-compatible turn): keep the
            # memory without the link.
            self.store.add_memory(user_id, text, None, blob)

    def search(self, user_id: str, query: str, k: int = 3) -> list[str]:
        if not query.strip() or k < 1:
            return []
        rows = self.store.list_memories(user_id, limit=self.max_scan)
        dim = self.embedder.dim
        kept = [
            (m.text, np.frombuffer(m.embedding, dtype=np.float32))
            for m in rows
            if m.embedding is not None and len(m.embedding) == 4 * dim
        ]
        if not kept:
            return []
        matrix = np.stack([v for _, v in kept])
        query_vec = _unit(np.asarray(self.embedder.embed_query(query), dtype=np.float32))
        return _best([t for t, _ in kept], matrix, query_vec, k, self.min_score)
