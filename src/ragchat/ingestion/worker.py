"""Ingestion in a child process, so readers never wait for writers.

An upload ingested in the server process shared its CPU, its GIL and its one embedder with
every query: a 100k-cue transcript made ``/query`` on another knowledge base take ~1 min.
``ProcessIngester`` runs ``ingest_job`` in a fresh child process (``python -m
ragchat.ingestion.child``) with its own embedder, at the lowest CPU priority (nice 19,
``SCHED_IDLE`` where Linux allows it) and one thread: parsing, chunking and embedding use only
CPU the server leaves idle, and the server's embedder stays free for readers.

A job is a ``session``. Entering it, the child parses, chunks and embeds the files (all but
those whose bytes the knowledge base already holds) while the caller holds no lock. Then the
caller takes the knowledge base's writer lock and calls ``ingest(target)``: the child runs
``ingest_job`` with those vectors at hand, on a stand-in whose every read and write of the
knowledge base is a typed message (``wire.py``) the parent answers on ``target`` through one
``dispatch`` — the commit happens where it always
did, through the same API, on any vector store backend. So the lock is held for a re-parse
and the save, not for the minutes of embedding: another upload to the same knowledge base is
not held behind a big one.

A child that dies (killed, out of memory) fails the job with ``IngestWorkerError``; the caller
discards its private instance and the server keeps serving. ``InProcessIngester`` has the same
interface and runs everything in the calling thread (``api.ingest_runner = "thread"``)."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from multiprocessing.connection import Connection
from typing import Any, Protocol

from ragchat import errors
from ragchat.embed.base import Embedder
from ragchat.errors import IngestCancelled
from ragchat.ingest.pipeline import load_file
from ragchat.ingestion.ingest import IngestReport, Loader, Progress, ingest_job
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
    RecordFile,
    Refused,
    Reply,
    Save,
    SetDocumentFile,
    Start,
    UnknownMessage,
    Warm,
    report_from_wire,
)
from ragchat.ingestion.wire import Progress as ProgressMessage
from ragchat.settings import Settings
from ragchat.vectorstores.base import WritableKB

log = logging.getLogger(__name__)

_POLL_S = 0.5
Ingest = Callable[[WritableKB], IngestReport]  # ingest the session's job into a target


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


class Ingester(Protocol):
    def session(
        self,
        job: IngestJob,
        *,
        progress: Progress | None = None,
        load: Loader | None = None,
        cancel: threading.Event | None = None,
    ) -> AbstractContextManager[Ingest]:
        """``load`` parses a file in this process (a ``ParseWorker``'s, bounded; a child uses
        its own, bounded by ``job.parse_limits``); ``cancel`` set stops the job
        (``IngestCancelled``)."""
        ...


class InProcessIngester:
    """``ingest_job`` in the calling thread, all of it under the caller's lock."""

    @contextmanager
    def session(
        self,
        job: IngestJob,
        *,
        progress: Progress | None = None,
        load: Loader | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[Ingest]:
        def ingest(kb: WritableKB) -> IngestReport:
            return ingest_job(kb, job, progress=progress or _no_progress, load=load or load_file)

        yield ingest


class ProcessIngester:
    """Sessions in a child process each (module docstring): a crash, or a parser that bloated
    its memory, takes nothing with it, at the price of loading the embedder per job (a second
    or two, at idle priority).

    ``embedder``: a picklable embedder to use in the child instead of the configured model
    (``HashingEmbedder`` in tests); None loads ``settings.embedding`` there."""

    def __init__(
        self,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        idle_priority: bool = True,
    ) -> None:
        if embedder is not None:
            try:
                pickle.dumps(embedder)
            except Exception as exc:
                raise errors.ConfigError(
                    f"embedder {embedder.model_name!r} cannot be sent to an ingestion process "
                    f"({exc}); set api.ingest_runner = 'thread'"
                ) from exc
        self._spec = ChildSpec(_without_secrets(settings), embedder, idle_priority)

    @contextmanager
    def session(
        self,
        job: IngestJob,
        *,
        progress: Progress | None = None,
        load: Loader | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[Ingest]:
        proc, parent = _start_child()
        log.info("ingestion worker pid %s started for %d file(s)", proc.pid, len(job.files))
        try:
            parent.send(Start(self._spec, job))
            _serve(parent, proc, None, progress, cancel, until=Warm)

            def ingest(kb: WritableKB) -> IngestReport:
                parent.send(Go(kb.name))
                done = _serve(parent, proc, kb, progress, cancel, until=Done)
                assert isinstance(done, Done)
                return report_from_wire(done.report)

            yield ingest
        finally:
            _kill(proc)
            parent.close()


def _without_secrets(settings: Settings) -> Settings:
    """The settings a child needs (embedding, data directory, downloads): the chat model's,
    the API's and the stores' (keys, cookie secret, database URL) reset to their defaults."""
    return settings.model_copy(
        update={
            "llm": type(settings.llm)(),
            "api": type(settings.api)(),
            "vector_store": type(settings.vector_store)(),
            "database_url": None,
        }
    )


def _start_child() -> tuple[subprocess.Popen[bytes], Connection]:
    """``python -m ragchat.ingestion.child`` in a session of its own (the parse sandbox it
    starts joins its process group), and our end of a socket pair to it. A plain subprocess,
    not ``multiprocessing``: no resource-tracker process outlives the server's shutdown."""
    ours, theirs = socket.socketpair()
    # The child gets what it needs over the socket; the server's secrets stay out of reach.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragchat.ingestion.child", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    finally:
        theirs.close()
    return proc, Connection(ours.detach())


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The child and its process group (its parse sandbox), if still there."""
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    proc.wait()


def _serve(
    conn: Connection,
    proc: subprocess.Popen[bytes],
    kb: WritableKB | None,
    progress: Progress | None,
    cancel: threading.Event | None,
    *,
    until: type[Warm] | type[Done],
) -> object:
    """Answers the child's calls on ``kb`` until it sends an ``until``, which it returns.
    Raises if the child fails or dies first, ``IngestCancelled`` once ``cancel`` is set
    (within ``_POLL_S``)."""
    while True:
        if cancel is not None and cancel.is_set():
            raise IngestCancelled("the server is shutting down")
        if not conn.poll(_POLL_S):
            if proc.poll() is not None and not conn.poll(0):
                raise _died(proc)
            continue
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            raise _died(proc) from None
        if isinstance(msg, until):
            return msg
        if isinstance(msg, ProgressMessage):
            if progress is not None:
                progress(msg.stage, msg.done, msg.total)  # may raise: the child is killed
        elif isinstance(msg, Call) and kb is not None:
            conn.send(_answer(kb, msg))
        elif isinstance(msg, Failed):
            raise IngestWorkerError(msg.message)
        else:  # a bug, not an input: say what arrived
            raise UnknownMessage(
                f"unexpected message from the ingestion worker: {type(msg).__name__}"
            )


def _died(proc: subprocess.Popen[bytes]) -> IngestWorkerError:
    code = proc.returncode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited ({code})"
    log.error("ingestion worker pid %s %s", proc.pid, how)
    return IngestWorkerError(
        f"the ingestion worker process {how} before finishing; the upload was not ingested, "
        "upload the files again"
    )


def dispatch(kb: WritableKB, call: Call) -> Any:
    """Does one of the child's reads or writes on ``kb``: the one place a message becomes a
    call of the knowledge base. Anything outside ``wire.Call`` is ``UnknownMessage``."""
    match call:
        case FileSha(path):
            return kb.catalogue.file_sha(path)
        case KnownDocuments(doc_ids):
            return kb.catalogue.known_documents(doc_ids)
        case DocsOfFile(path):
            return kb.catalogue.docs_of_file(path)
        case PathsWithSha(sha):
            return kb.catalogue.paths_with_sha(sha)
        case SetDocumentFile(doc_id, path):
            return kb.catalogue.set_document_file(doc_id, path)
        case RecordFile(path, sha, when):
            return kb.catalogue.record_file(path, sha, when)
        case AddChunks(chunks, vectors, save):
            return kb.add_chunks(chunks, vectors=vectors, save=save)
        case AddDocumentRow(row):
            return kb.add_document_row(row)
        case DeleteDocument(doc_id, save):
            return kb.delete_document(doc_id, save=save)
        case Save():
            return kb.save()
        case _:
            raise UnknownMessage(
                f"unknown message from the ingestion worker: {type(call).__name__}"
            )


def _answer(kb: WritableKB, call: Call) -> Reply | Refused:
    """``Reply`` with the result of ``call`` on ``kb``, or ``Refused`` with why it failed."""
    try:
        return Reply(dispatch(kb, call))
    except Exception as exc:  # the child raises it in ingest_job, which fails the job
        log.exception("ingestion call %s failed", type(call).__name__)
        return Refused(f"{type(exc).__name__}: {exc}")


def build_ingester(settings: Settings, embedder: Embedder) -> Ingester:
    """What upload jobs ingest with, chosen once at start-up (``api.ingest_runner``): a child
    process loads the configured model itself; any other embedder (a test fake, possibly
    behind the fast path's wrappers) is sent to it, so it must pickle."""
    if settings.api.ingest_runner == "thread":
        return InProcessIngester()
    from ragchat.embed.factory import is_loaded

    inner: Any = embedder
    while getattr(inner, "inner", None) is not None:  # the fast path's wrappers
        inner = inner.inner
    return ProcessIngester(settings, embedder=None if is_loaded(inner) else inner)
