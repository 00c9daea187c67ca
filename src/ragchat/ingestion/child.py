"""The child side of ``worker.py``: one ingestion job in a process of its own.

Runs at the lowest CPU priority with one thread. First it parses, chunks and embeds the
job's files (those the parent did not find unchanged) into a memo, and says ``Warm``; on
``Go`` it runs ``ingest_job`` on ``_RemoteKB`` — every read and write of the knowledge base a
typed message of ``wire.py`` the parent answers — with an embedder that serves the memo first.
Anything it raises is reported as ``Failed`` with a message fit for the job row."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import IngestError, RagchatError
from ragchat.ingest.pipeline import load_file
from ragchat.ingest.sandbox import ParseWorker
from ragchat.ingestion.ingest import ingest_job
from ragchat.ingestion.job import IngestJob
from ragchat.ingestion.wire import (
    AddChunks,
    AddDocumentRow,
    Call,
    ChildSpec,
    DeleteDocument,
    DocsOfFile,
    Done,
    Failed,
    FileSha,
    Go,
    IngestWorkerError,
    KnownDocuments,
    PathsWithSha,
    Progress,
    RecordFile,
    Refused,
    Reply,
    Save,
    SetDocumentFile,
    Start,
    UnknownMessage,
    Warm,
    report_to_wire,
)
from ragchat.types import Chunk, LoadedDocument
from ragchat.vectorstores.base import DocumentRow, WritableKB

_BLOCK = 64  # texts per embedding call while warming: progress moves, a kill loses little


class _Parent:
    """The socket to the parent: each read or write of the knowledge base is one ``Call``
    answered by ``Reply`` (its value) or ``Refused`` (raised here, which fails the job)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def ask(self, call: Call) -> Any:
        self._conn.send(call)
        answer = self._conn.recv()
        if isinstance(answer, Reply):
            return answer.value
        if isinstance(answer, Refused):
            raise IngestWorkerError(answer.message)
        raise UnknownMessage(f"unexpected answer from the parent: {type(answer).__name__}")


class _RemoteCatalogue:
    """The parts of the knowledge base's catalogue ``ingest_job`` reads and writes."""

    def __init__(self, parent: _Parent) -> None:
        self._parent = parent

    def file_sha(self, path: str) -> str | None:
        return cast("str | None", self._parent.ask(FileSha(path)))

    def known_documents(self, doc_ids: Iterable[str]) -> set[str]:
        return cast(set[str], self._parent.ask(KnownDocuments(tuple(doc_ids))))

    def docs_of_file(self, path: str) -> list[str]:
        return cast(list[str], self._parent.ask(DocsOfFile(path)))

    def paths_with_sha(self, sha256: str) -> list[str]:
        return cast(list[str], self._parent.ask(PathsWithSha(sha256)))

    def set_document_file(self, doc_id: str, path: str) -> None:
        self._parent.ask(SetDocumentFile(doc_id, path))

    def record_file(self, path: str, sha256: str, when: str) -> None:
        self._parent.ask(RecordFile(path, sha256, when))


class _RemoteKB:
    """The knowledge base as the child sees it: the parent's instance, the child's embedder."""

    def __init__(self, conn: Connection, embedder: Embedder, name: str) -> None:
        self._parent = _Parent(conn)
        self.catalogue = _RemoteCatalogue(self._parent)
        self.embedder = embedder
        self.name = name

    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: Matrix | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> int:
        return cast(int, self._parent.ask(AddChunks(tuple(chunks), vectors, save)))

    def add_document_row(self, row: DocumentRow) -> None:
        self._parent.ask(AddDocumentRow(row))

    def delete_document(self, doc_id: str, *, save: bool = True) -> int:
        return cast(int, self._parent.ask(DeleteDocument(doc_id, save)))

    def save(self) -> None:
        self._parent.ask(Save())


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


def _warm(conn: Connection, memo: _MemoEmbedder, load: _MemoLoader, job: IngestJob) -> None:
    """Parses, chunks and embeds what the ingest will need, before the parent takes a lock:
    files within the upload caps (the ingest that follows applies them exactly)."""
    todo = [f.path for f in job.files if f.sha is not None and f.key not in job.skip]
    meter = job.caps.meter()
    texts: list[str] = []
    for i, path in enumerate(todo):
        conn.send(Progress("read", i, len(todo)))
        try:
            docs = load(path)
            chunks = [c.text for d in docs for c in job.chunker.chunk(d) if not c.is_parent]
        except (IngestError, RecursionError):  # the ingest that follows reports it
            continue
        chars = sum(len(s.text) for d in docs for s in d.sections)
        if meter.admit(chars, len(chunks)) is None:
            texts.extend(chunks)
    conn.send(Progress("read", len(todo), len(todo)))
    memo.fill(texts, lambda done, total: conn.send(Progress("embed", done, total)))


def child_main(conn: Connection, spec: ChildSpec, job: IngestJob) -> None:
    lower_priority(spec.idle_priority)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"

    def saving(stage: str, done: int, total: int) -> None:
        if stage == "embed":  # the vectors are at hand: this is the save
            conn.send(Progress("save", done, total))

    parser = ParseWorker(job.parse_limits) if job.parse_limits is not None else None
    load = _MemoLoader(parser.load if parser is not None else load_file)
    try:
        memo = _MemoEmbedder(_embedder(spec))
        _warm(conn, memo, load, job)
        conn.send(Warm())
        go = conn.recv()
        if not isinstance(go, Go):
            return
        remote = cast(WritableKB, _RemoteKB(conn, memo, go.name))  # duck-typed: asks the parent
        conn.send(Progress("save", 0, 1))  # re-reading the files, then the save
        report = ingest_job(remote, job, progress=saving, load=load)
    except BaseException as exc:  # reported, then the child exits
        message = str(exc) if isinstance(exc, RagchatError) else _describe(exc)
        with contextlib.suppress(OSError):  # the parent is gone or gave up on this job
            conn.send(Failed(message))
        return
    finally:
        if parser is not None:
            parser.close()
    conn.send(Done(report_to_wire(report)))


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
    _start = _conn.recv()
    if isinstance(_start, Start):
        child_main(_conn, _start.spec, _start.job)
