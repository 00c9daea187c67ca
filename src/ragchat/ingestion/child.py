"""The child side of ``worker.py``: one ingestion job in a process of its own.

Runs at the lowest CPU priority with one thread. First it parses, chunks and embeds the
job's files (those the parent did not find unchanged) into a memo, and says "warm"; on "go"
it runs ``ingest_paths`` on ``_RemoteKB`` — every read and write of the knowledge base a call
the parent answers — with an embedder that serves the memo first. Anything it raises is
reported as "failed" with a message fit for the job row."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import IngestError, RagchatError
from ragchat.ingest.pipeline import load_file
from ragchat.ingest.registry import iter_files
from ragchat.ingest.sandbox import ParseWorker
from ragchat.ingestion.ingest import UploadCaps, file_key, ingest_paths
from ragchat.ingestion.wire import ChildJob, ChildSpec, IngestWorkerError, report_to_wire
from ragchat.types import LoadedDocument
from ragchat.vectorstores.base import WritableKB

_BLOCK = 64  # texts per embedding call while warming: progress moves, a kill loses little
_SUBOBJECTS = frozenset({"store"})  # attributes of a WritableKB that are objects, not methods


class _Remote:
    """Forwards method calls (``store.file_sha(...)``, ``add_chunks(...)``) to the parent."""

    def __init__(self, conn: Connection, prefix: str = "") -> None:
        self._conn = conn
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if not self._prefix and name in _SUBOBJECTS:
            return _Remote(self._conn, f"{name}.")
        return lambda *args, **kwargs: self._call(self._prefix + name, args, kwargs)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)  # generators
        self._conn.send(("call", name, args, kwargs))
        status, value = self._conn.recv()
        if status != "ok":
            raise IngestWorkerError(value)
        return value


class _RemoteKB(_Remote):
    """The knowledge base as the child sees it: the parent's instance, the child's embedder."""

    def __init__(self, conn: Connection, embedder: Embedder, attrs: dict[str, Any]) -> None:
        super().__init__(conn)
        self.embedder = embedder
        for name, value in attrs.items():
            setattr(self, name, value)


class _MemoEmbedder:
    """``inner`` with the vectors of texts embedded ahead (``fill``) served from memory."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dim = inner.dim
        self.symmetric = bool(getattr(inner, "symmetric", False))
        self._memo: dict[str, Vector] = {}

    def fill(self, texts: Sequence[str], progress: Callable[[int, int], None]) -> None:
        todo = sorted(set(texts) - self._memo.keys(), key=len)  # little padding per block
        for start in range(0, len(todo), _BLOCK):
            progress(start, len(todo))
            self._embed(todo[start : start + _BLOCK])
        progress(len(todo), len(todo))

    def _embed(self, texts: list[str]) -> None:
        vectors = np.asarray(self.inner.embed_documents(texts), dtype=np.float32)
        self._memo.update(zip(texts, vectors, strict=True))

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            self._embed(missing)
        return np.stack([self._memo[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        return self.inner.embed_query(text)


def lower_priority(idle: bool) -> None:
    """Nice 19, and ``SCHED_IDLE`` (runs only when a core is otherwise idle) where allowed."""
    with contextlib.suppress(OSError):
        os.nice(19)
    if idle and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _embedder(spec: ChildSpec) -> Embedder:
    if spec.embedder is not None:
        return cast(Embedder, spec.embedder)
    from ragchat.embed.factory import ingest_settings, load_embedder

    # Only documents are embedded here: the ingestion backend alone (embedding.ingest_backend).
    settings = ingest_settings(spec.settings) or spec.settings
    one_thread = settings.embedding.model_copy(update={"threads": 1})
    return load_embedder(settings.model_copy(update={"embedding": one_thread}))


class _MemoLoader:
    """Parses each file once for both passes; a parse failure is replayed in the second."""

    def __init__(self, load: Callable[[Path], list[LoadedDocument]]) -> None:
        self.load = load
        self._docs: dict[Path, list[LoadedDocument] | IngestError] = {}

    def __call__(self, path: Path) -> list[LoadedDocument]:
        if path not in self._docs:
            try:
                self._docs[path] = self.load(path)
            except IngestError as exc:
                self._docs[path] = exc
        found = self._docs[path]
        if isinstance(found, IngestError):
            raise found
        return found


def _warm(conn: Connection, memo: _MemoEmbedder, load: _MemoLoader, job: ChildJob) -> None:
    """Parses, chunks and embeds what the ingest will need, before the parent takes a lock:
    files within the upload caps (the ingest that follows applies them exactly)."""
    todo = [p for p in iter_files(job.files) if file_key(p) not in job.skip]
    caps = job.caps or UploadCaps()
    texts: list[str] = []
    chars_total = 0
    for i, path in enumerate(todo):
        conn.send(("progress", "read", i, len(todo)))
        try:
            docs = load(path)
            chunks = [c.text for d in docs for c in job.chunker.chunk(d) if not c.is_parent]
        except (IngestError, RecursionError):  # the ingest that follows reports it
            continue
        chars = sum(len(s.text) for d in docs for s in d.sections)
        if caps.refusal(chars, len(chunks), chars_total, len(texts)) is not None:
            continue
        chars_total += chars
        texts.extend(chunks)
    conn.send(("progress", "read", len(todo), len(todo)))
    memo.fill(texts, lambda done, total: conn.send(("progress", "embed", done, total)))


def child_main(conn: Connection, spec: ChildSpec, job: ChildJob) -> None:
    lower_priority(spec.idle_priority)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"

    def saving(stage: str, done: int, total: int) -> None:
        if stage == "embed":  # the vectors are at hand: this is the save
            conn.send(("progress", "save", done, total))

    parser = ParseWorker(job.parse_limits) if job.parse_limits is not None else None
    load = _MemoLoader(parser.load if parser is not None else load_file)
    try:
        memo = _MemoEmbedder(_embedder(spec))
        _warm(conn, memo, load, job)
        conn.send(("warm",))
        go = conn.recv()
        if go[0] != "go":
            return
        remote = cast(WritableKB, _RemoteKB(conn, memo, go[1]))  # duck-typed: calls the parent
        conn.send(("progress", "save", 0, 1))  # re-reading the files, then the save
        report = ingest_paths(
            remote, job.files, job.chunker, progress=saving, load=load, caps=job.caps
        )
    except BaseException as exc:  # reported, then the child exits
        message = str(exc) if isinstance(exc, RagchatError) else _describe(exc)
        with contextlib.suppress(OSError):  # the parent is gone or gave up on this job
            conn.send(("failed", message))
        return
    finally:
        if parser is not None:
            parser.close()
    conn.send(("done", report_to_wire(report)))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "a file is nested too deeply to parse"
    if isinstance(exc, MemoryError):
        return "a file needs more memory than the ingestion worker has"
    return f"{type(exc).__name__}: {exc}"


def die_with_parent(poll_s: float = 1.0) -> None:
    """A server worker killed outright (kill -9, out of memory) cannot stop its job's child:
    the child, in a session of its own, would parse and embed on for nobody. A watchdog
    thread ends it and its parse sandbox (its process group) once the parent is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os.killpg(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


if __name__ == "__main__":  # started by ``worker.ProcessIngester`` with its socket's fd
    die_with_parent()
    _conn = Connection(int(sys.argv[1]))
    _spec, _job = _conn.recv()
    child_main(_conn, _spec, _job)
