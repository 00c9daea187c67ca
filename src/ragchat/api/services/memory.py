"""``SqlMemoryStore``: the companion's long-term memory, persisted in the store's memories
table with an embedding per snippet, searched by cosine similarity. Satisfies
``ragchat.agents.memory.MemoryStore``, so the engine uses it as is."""

from __future__ import annotations

import logging

import numpy as np

from ragchat.errors import Conflict
from ragchat.index.base import Embedder
from ragchat.store.base import Store

log = logging.getLogger(__name__)


class SqlMemoryStore:
    """``min_score`` drops snippets less similar than that cosine (an unrelated question should
    surface nothing); ``max_scan`` bounds how many recent snippets a search compares."""

    def __init__(
        self, store: Store, embedder: Embedder, *, min_score: float = 0.3, max_scan: int = 1000
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
        scores = matrix @ query_vec
        order = np.argsort(-scores)[:k]
        return [kept[i][0] for i in order if float(scores[i]) >= self.min_score]


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
