"""One live ``KnowledgeBase`` per name, shared by the engine's retrievers and the document
endpoints, so an upload is searchable as soon as its job finishes.

Writes (ingestion, deletion) go to a private instance opened for the job; when the write
succeeds it replaces the live one under the lock. Searches never see half-written indexes and
are only blocked for the instant of the swap, not for the seconds an ingestion embeds."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragchat.index.base import Embedder, Matrix, Vector
from ragchat.index.kb import KnowledgeBase
from ragchat.types import Chunk

log = logging.getLogger(__name__)


class KnowledgeBaseRegistry:
    def __init__(
        self, root: Path, embedder: Embedder, *, chunking: Mapping[str, Any] | None = None
    ) -> None:
        self.root = Path(root)
        self.embedder = embedder
        self.chunking = dict(chunking or {})
        self._live: dict[str, KnowledgeBase] = {}
        self._lock = threading.RLock()  # guards _live; held by every read and by the swap
        self._writers: dict[str, threading.Lock] = {}

    # -- reading -----------------------------------------------------------------------------
    def open(self, name: str) -> SharedKB:
        """The engine's ``kb_opener``: a proxy that always reads the current instance. Raises
        ``KnowledgeBaseNotFound`` now rather than on first search."""
        with self.reading(name):
            pass
        return SharedKB(self, name)

    @contextmanager
    def reading(self, name: str) -> Iterator[KnowledgeBase]:
        with self._lock:
            kb = self._live.get(name)
            if kb is None:
                kb = self._live[name] = KnowledgeBase.open(self.root, name, self.embedder)
            yield kb

    def names(self) -> list[str]:
        return KnowledgeBase.names(self.root)

    def vector_count(self, name: str) -> int | None:
        """Live count when the KB is loaded, else None (the manifest has it)."""
        with self._lock:
            kb = self._live.get(name)
            return kb.child_count() if kb is not None else None

    # -- writing -----------------------------------------------------------------------------
    def _writer_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._writers.setdefault(name, threading.Lock())

    @contextmanager
    def writing(self, name: str, *, create: bool = False) -> Iterator[KnowledgeBase]:
        """A private instance to modify (one writer per KB at a time); it becomes the live one
        when the block exits without error, and is discarded otherwise. A knowledge base
        created here that ends the block without a document is deleted again."""
        with self._writer_lock(name):
            created = create and name not in self.names()
            if create:
                kb = KnowledgeBase.open_or_create(
                    self.root, name, self.embedder, chunking=self.chunking
                )
            else:
                kb = KnowledgeBase.open(self.root, name, self.embedder)
            try:
                yield kb
            except BaseException:
                kb.close()
                if created:  # a failed first ingest leaves no empty knowledge base behind
                    KnowledgeBase.delete(self.root, name)
                raise
            if created and kb.child_count() == 0:
                kb.close()
                KnowledgeBase.delete(self.root, name)
                log.info("knowledge base %s not created: nothing was ingested into it", name)
                return
            with self._lock:
                old = self._live.get(name)
                self._live[name] = kb
                if old is not None:
                    old.close()
            log.info("knowledge base %s reloaded (%d vectors)", name, kb.child_count())

    def close(self) -> None:
        with self._lock:
            for kb in self._live.values():
                kb.close()
            self._live.clear()


class SharedKB:
    """``SearchableKB`` over whatever instance of ``name`` is live in the registry."""

    def __init__(self, registry: KnowledgeBaseRegistry, name: str) -> None:
        self._registry = registry
        self.name = name
        self.embedder = registry.embedder

    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        with self._registry.reading(self.name) as kb:
            return kb.dense_search(query_vec, k, filters)

    def bm25_search(
        self, query: str, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        with self._registry.reading(self.name) as kb:
            return kb.bm25_search(query, k, filters)

    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]:
        with self._registry.reading(self.name) as kb:
            return kb.dense_scores(query_vec, chunk_ids)

    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        with self._registry.reading(self.name) as kb:
            return kb.bm25_scores(query, chunk_ids)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        with self._registry.reading(self.name) as kb:
            return kb.get_chunks(chunk_ids)

    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        with self._registry.reading(self.name) as kb:
            return kb.neighbour(chunk, offset)

    def child_count(self) -> int:
        with self._registry.reading(self.name) as kb:
            return kb.child_count()

    def children(self) -> list[Chunk]:
        with self._registry.reading(self.name) as kb:
            return kb.children()

    def version(self) -> tuple[Any, ...]:
        with self._registry.reading(self.name) as kb:
            return kb.version()  # a write swaps in a new instance, hence a new version

    def stored_vectors(self, chunk_ids: Sequence[str]) -> Matrix | None:
        with self._registry.reading(self.name) as kb:
            return kb.stored_vectors(chunk_ids)
