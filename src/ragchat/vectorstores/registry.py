"""One live ``KnowledgeBase`` per name, shared by the engine's retrievers and the document
endpoints, so an upload is searchable as soon as its job finishes.

Writes (ingestion, deletion) go to a private instance opened for the job once the knowledge
base's cross-process write lock is held (so it builds on the latest commit, another server
worker's or ``ragchat ingest``'s included); when the write succeeds it replaces the live one
under the lock. Searches never see half-written indexes and are only blocked for the instant of
the swap, not for the seconds an ingestion embeds.

Another process's commit (a second server worker, the CLI) is picked up by the next read: a
live instance is checked against ``CURRENT`` at most once per ``STALE_CHECK_S`` and reopened
when it is stale."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import IndexStateError, IngestCancelled, KnowledgeBaseNotFound
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import SearchableKB, WritableKB
from ragchat.vectorstores.lock import LOCK_TIMEOUT_S, WriteLock

log = logging.getLogger(__name__)

STALE_CHECK_S = 1.0  # how often a live instance is compared with the committed state


class KnowledgeBaseRegistry:
    """Knowledge bases in ``settings``' configured vector store (``stores.vector_store``);
    without settings, embedded files under ``root`` (tests). Every backend difference is the
    ``VectorStore``'s: the registry only asks it."""

    def __init__(
        self,
        root: Path,
        embedder: Embedder,
        *,
        chunking: Mapping[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.root = Path(root)
        self.embedder = embedder
        self.settings = settings
        # what a knowledge base created here is chunked with: the settings' when given
        self.chunking = settings.chunking.model_dump() if settings else dict(chunking or {})
        self.vector_store = (
            stores.vector_store(settings) if settings else stores.EmbeddedStore(root)
        )
        self._live: dict[str, WritableKB] = {}
        self._lock = threading.RLock()  # guards _live; held by every read and by the swap
        self._writers: dict[str, threading.Lock] = {}
        self._checked: dict[str, float] = {}  # name -> monotonic time of the last stale check

    # -- reading -----------------------------------------------------------------------------
    @property
    def remote(self) -> bool:
        """True when the store is shared (Qdrant, pgvector): any instance reads the current
        state."""
        return self.vector_store.shared

    def _open(
        self, name: str, *, create: bool = False, lock: WriteLock | None = None
    ) -> WritableKB:
        if create and name not in self.vector_store.names():
            return self.vector_store.create(name, self.embedder, chunking=self.chunking, lock=lock)
        return self.vector_store.open(name, self.embedder, lock=lock)

    def open(self, name: str) -> SearchableKB:
        """The engine's ``kb_opener``: a proxy that always reads the current instance (a
        shared store's instance itself: it reads the store). Raises
        ``KnowledgeBaseNotFound`` now rather than on first search."""
        with self.reading(name) as kb:
            if self.remote:
                return kb
        return SharedKB(self, name)

    @contextmanager
    def reading(self, name: str) -> Iterator[WritableKB]:
        self._refresh(name)
        with self._lock:
            kb = self._live.get(name)
            if kb is None:
                kb = self._live[name] = self._open(name)
                self._checked[name] = time.monotonic()
            yield kb

    def _refresh(self, name: str) -> None:
        """Reopens the live instance when another process committed since it was opened (a
        stat and a small read of ``CURRENT``, at most once per ``STALE_CHECK_S``; a shared
        store is never stale). The new one loads outside the lock: searches go on meanwhile
        on the old one, then the two are swapped."""
        if self.remote:
            return
        with self._lock:
            kb = self._live.get(name)
            now = time.monotonic()
            if kb is None or now - self._checked.get(name, 0.0) < STALE_CHECK_S:
                return
            self._checked[name] = now
            if not kb.stale():
                return
        try:
            fresh = self._open(name)
        except KnowledgeBaseNotFound:  # deleted by another process
            with self._lock:
                if self._live.get(name) is kb:
                    del self._live[name]
                    kb.close()
            raise
        except Exception:  # searches go on with what was read; retried at the next check
            log.exception("knowledge base %s changed in another process: reopening failed", name)
            return
        with self._lock:
            if self._live.get(name) is not kb:  # another thread swapped first
                fresh.close()
                return
            self._live[name] = fresh
            kb.close()
        log.info("knowledge base %s changed in another process: reopened", name)

    def names(self) -> list[str]:
        return self.vector_store.names()

    def describe(self, name: str) -> stores.KBInfo:
        return self.vector_store.describe(name)

    def problems(self, name: str) -> list[str]:
        """Why the knowledge base on disk cannot be opened ([] when it can), from a quick
        check of headers and counts; a shared store (Qdrant) is not probed."""
        if self.remote:
            return []
        try:
            return self.vector_store.check(name, deep=False).problems
        except Exception as exc:  # never let the probe fail /health itself
            log.warning("health: checking knowledge base %s failed: %s", name, exc)
            return [f"check failed ({type(exc).__name__})"]

    def vector_count(self, name: str) -> int | None:
        """Live count when the KB is loaded and current, else None (the manifest has it)."""
        with self._lock:
            kb = self._live.get(name)
            if kb is None or kb.stale():
                return None
            return kb.child_count()

    # -- writing -----------------------------------------------------------------------------
    def _delete(self, name: str) -> None:
        self.vector_store.delete(name)

    def _writer_lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self._writers.setdefault(name, threading.Lock())

    def _write_lock(self, name: str) -> WriteLock:
        return self.vector_store.write_lock(name)

    @contextmanager
    def writing(
        self,
        name: str,
        *,
        create: bool = False,
        on_wait: Callable[[], None] | None = None,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> Iterator[WritableKB]:
        """A private instance to modify; it becomes the live one when the block exits without
        error, and is discarded otherwise. A knowledge base created here that ends the block
        without a document is deleted again.

        One writer per knowledge base at a time, across threads and processes: the instance is
        opened once the write lock is held, so it starts from the latest commit whoever made
        it. While another writer holds the lock this waits (``on_wait`` is called once, a set
        ``cancel`` stops the wait with ``IngestCancelled``, and after ``timeout_s`` it gives up
        with ``IndexStateError``; None waits as long as it takes)."""
        thread_lock = self._writer_lock(name)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        if not thread_lock.acquire(blocking=False):
            if on_wait is not None:
                on_wait()
            while not thread_lock.acquire(timeout=0.2):
                if cancel is not None and cancel.is_set():
                    raise IngestCancelled("stopped while waiting for the knowledge base")
                if deadline is not None and time.monotonic() >= deadline:
                    raise IndexStateError(
                        f"knowledge base {name!r} is being written by another ingestion; "
                        "try again when it has finished"
                    )
        try:
            lock = self._write_lock(name)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            lock.acquire(left, cancel=cancel, on_wait=on_wait)
            try:
                yield from self._write_locked(name, create, lock)
            finally:
                lock.release()
        finally:
            thread_lock.release()

    def _write_locked(self, name: str, create: bool, lock: WriteLock) -> Iterator[WritableKB]:
        created = create and name not in self.names()
        kb = self._open(name, create=create, lock=lock)
        try:
            yield kb
        except BaseException:
            kb.close()
            if created:  # a failed first ingest leaves no empty knowledge base behind
                self._delete(name)
            raise
        if created and kb.child_count() == 0:
            kb.close()
            self._delete(name)
            log.info("knowledge base %s not created: nothing was ingested into it", name)
            return
        with self._lock:
            old = self._live.get(name)
            self._live[name] = kb
            self._checked[name] = time.monotonic()
            if old is not None:
                old.close()
        log.info("knowledge base %s reloaded (%d vectors)", name, kb.child_count())

    def remove(self, name: str) -> None:
        """Deletes the knowledge base's indexes (after any write in progress), and forgets
        its live instance; a missing one is no error."""
        with self._writer_lock(name):
            lock = self._write_lock(name)
            lock.acquire(LOCK_TIMEOUT_S)
            try:
                with self._lock:
                    live = self._live.pop(name, None)
                    if live is not None:
                        live.close()
                if name in self.names():
                    self._delete(name)
            finally:
                lock.release()

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
