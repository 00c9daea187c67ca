"""Long-term memory of past conversations, per user. The companion's ``get_long_term_memory``
tool searches it. ``InMemoryMemoryStore`` serves the CLI and tests; the server plugs in a
persistent store with the same two methods."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ragchat.index.base import Embedder, Vector


@runtime_checkable
class MemoryStore(Protocol):
    def search(self, user_id: str, query: str, k: int = 3) -> list[str]:
        """Snippets of the user's past conversations most similar to ``query``, best first."""
        ...

    def add(self, user_id: str, conversation_id: str, text: str) -> None: ...


@dataclass(frozen=True)
class _Memory:
    conversation_id: str
    text: str
    vector: Vector


class InMemoryMemoryStore:
    """Embedding search over snippets kept in process memory (lost on exit).

    ``min_score`` drops snippets less similar than that cosine, so an unrelated question does
    not surface random memories."""

    def __init__(self, embedder: Embedder, *, min_score: float = 0.3, max_per_user: int = 500):
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
        scores = np.stack([m.vector for m in items]) @ self.embedder.embed_query(query)
        order = np.argsort(-scores)[:k]
        return [items[i].text for i in order if float(scores[i]) >= self.min_score]
