"""Micro-batching: concurrent callers share one model call instead of queueing one by one.

The server answers many turns at once, and every turn embeds something (its message, the
sentences it may quote). One embedding model runs one call at a time; ``MicroBatchingEmbedder``
wraps ANY ``Embedder`` (the sentence-transformers one, an ONNX one, the test fake) and gathers
the texts of the calls that arrive together into one ``embed_documents`` call of the inner
embedder, then hands each caller its own rows.

Why hand-written: the few-millisecond gathering window, the pass-through of large ingest
calls and the query/document distinction are specific to this protocol; a worker thread, a
queue and futures from the standard library are all it needs.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector

log = logging.getLogger(__name__)


@dataclass
class _Request:
    texts: list[str]
    query: bool  # embed_query semantics (only differs from documents for asymmetric models)
    future: Future[Matrix] = field(default_factory=Future)


class MicroBatchingEmbedder:
    """Gathers concurrent calls for at most ``max_wait_ms`` (or until ``max_batch`` texts are
    waiting) and embeds them in one call of ``inner``. A caller that finds the embedder quiet
    (no other request for ``idle_ms``) does not wait: a lone turn pays nothing. Calls larger
    than ``max_batch`` texts (ingestion) and calls with a progress bar go straight to
    ``inner``. Errors of a batch are raised in every caller of that batch.

    Queries join document batches when ``inner.symmetric`` is true (the same vector either
    way, as for sentence-transformers models without a query prompt); otherwise queries are
    batched among themselves and embedded one ``embed_query`` after another."""

    def __init__(
        self,
        inner: Embedder,
        *,
        max_wait_ms: float = 2.0,
        max_batch: int = 64,
        idle_ms: float = 50.0,
    ) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dim = inner.dim
        self.symmetric = bool(getattr(inner, "symmetric", False))
        self.max_wait = max_wait_ms / 1000.0
        self.max_batch = max(1, max_batch)
        self.idle = idle_ms / 1000.0
        self.model_calls = 0  # calls of ``inner`` made for batches (observability, tests)
        self._queue: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._last_arrival = 0.0

    # -- the Embedder protocol --------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if progress or len(texts) > self.max_batch:
            return np.asarray(self.inner.embed_documents(texts, progress=progress), np.float32)
        return self._submit(list(texts), query=False)

    def embed_query(self, text: str) -> Vector:
        return self._submit([text], query=True)[0]

    # -- batching -----------------------------------------------------------------------------

    def _submit(self, texts: list[str], *, query: bool) -> Matrix:
        request = _Request(texts, query)
        self._ensure_worker()
        self._queue.put(request)
        return request.future.result()

    def _ensure_worker(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        with self._start_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._run, name="ragchat-embed-batcher", daemon=True
                )
                self._worker.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            now = time.monotonic()
            quiet = now - self._last_arrival > self.idle
            self._last_arrival = now
            batch = [first]
            size = len(first.texts)
            deadline = now + (0.0 if quiet else self.max_wait)
            while size < self.max_batch:
                timeout = deadline - time.monotonic()
                try:
                    nxt = (
                        self._queue.get_nowait() if timeout <= 0 else self._queue.get(True, timeout)
                    )
                except queue.Empty:
                    break
                self._last_arrival = time.monotonic()
                batch.append(nxt)
                size += len(nxt.texts)
            self._embed(batch)

    def _embed(self, batch: list[_Request]) -> None:
        groups: dict[bool, list[_Request]] = {}
        for request in batch:
            groups.setdefault(request.query and not self.symmetric, []).append(request)
        for as_query, requests in groups.items():
            try:
                self._embed_group(requests, as_query=as_query)
            except BaseException as exc:  # every caller of the batch gets the error
                for request in requests:
                    if not request.future.done():
                        request.future.set_exception(exc)

    def _embed_group(self, requests: list[_Request], *, as_query: bool) -> None:
        # Identical texts (two turns asking the same thing) are embedded once.
        unique = list(dict.fromkeys(t for r in requests for t in r.texts))
        row = {t: i for i, t in enumerate(unique)}
        self.model_calls += 1
        if as_query:
            vectors = np.stack([np.asarray(self.inner.embed_query(t)) for t in unique])
        else:
            vectors = np.asarray(self.inner.embed_documents(unique), dtype=np.float32)
        vectors = vectors.astype(np.float32, copy=False)
        for request in requests:
            request.future.set_result(vectors[[row[t] for t in request.texts]])
