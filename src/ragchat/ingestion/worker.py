"""Ingestion in a child process, so readers never wait for writers.

An upload ingested in the server process shared its CPU, its GIL and its one embedder with
every query: a 100k-cue transcript made ``/query`` on another knowledge base take ~1 min.
``ProcessIngester`` runs ``ingest_paths`` in a fresh child process (``python -m
ragchat.ingestion.child``) with its own embedder, at the lowest CPU priority (nice 19,
``SCHED_IDLE`` where Linux allows it) and one thread: parsing, chunking and embedding use only
CPU the server leaves idle, and the server's embedder stays free for readers.

A job is a ``session``. Entering it, the child parses, chunks and embeds the files (all but
those whose bytes the knowledge base already holds) while the caller holds no lock. Then the
caller takes the knowledge base's writer lock and calls ``ingest(target)``: the child runs
``ingest_paths`` with those vectors at hand, on a stand-in whose every read and write of the
knowledge base is a call the parent answers on ``target`` — the commit happens where it always
did, through the same API, on any vector store backend. So the lock is held for a re-parse
and the save, not for the minutes of embedding: another upload to the same knowledge base is
not held behind a big one.

A child that dies (killed, out of memory) fails the job with ``IngestWorkerError``; the caller
discards its private instance and the server keeps serving. ``InProcessIngester`` has the same
interface and runs everything in the calling thread (``api.ingest_runner = "thread"``)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from ragchat import errors
from ragchat.embed.base import Embedder
from ragchat.errors import IngestCancelled
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.pipeline import load_file
from ragchat.ingest.sandbox import ParseLimits
from ragchat.ingestion.ingest import (
    IngestReport,
    Loader,
    Progress,
    UploadCaps,
    file_key,
    ingest_paths,
)
from ragchat.ingestion.wire import ChildJob, ChildSpec, IngestWorkerError, report_from_wire
from ragchat.settings import Settings
from ragchat.vectorstores.base import WritableKB

log = logging.getLogger(__name__)

_POLL_S = 0.5
Ingest = Callable[[WritableKB], IngestReport]  # ingest the session's files into a target
CurrentSha = Callable[[str], "str | None"]  # file key -> sha256 the knowledge base holds


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclasses.dataclass(frozen=True)
class JobInput:
    """What one ingestion job is given besides its files: ``load`` parses a file in this
    process (a ``ParseWorker``'s, bounded), ``parse_limits`` bound a child's own parser;
    ``current_sha`` says what the knowledge base already holds (nothing is embedded ahead for
    an unchanged file); ``cancel`` set stops the job (``IngestCancelled``)."""

    caps: UploadCaps | None = None
    load: Loader | None = None
    parse_limits: ParseLimits | None = None
    current_sha: CurrentSha | None = None
    cancel: threading.Event | None = None


class Ingester(Protocol):
    def session(
        self,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
        job: JobInput = JobInput(),
    ) -> AbstractContextManager[Ingest]: ...


class InProcessIngester:
    """``ingest_paths`` in the calling thread, all of it under the caller's lock."""

    @contextmanager
    def session(
        self,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
        job: JobInput = JobInput(),
    ) -> Iterator[Ingest]:
        def ingest(kb: WritableKB) -> IngestReport:
            return ingest_paths(
                kb,
                paths,
                chunker,
                progress=progress or _no_progress,
                load=job.load or load_file,
                caps=job.caps,
            )

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
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
        job: JobInput = JobInput(),
    ) -> Iterator[Ingest]:
        files = [Path(p) for p in paths]
        skip = _unchanged(files, job.current_sha) if job.current_sha is not None else set()
        proc, parent = _start_child()
        log.info("ingestion worker pid %s started for %d file(s)", proc.pid, len(files))
        try:
            parent.send((self._spec, ChildJob(files, chunker, skip, job.caps, job.parse_limits)))
            _serve(parent, proc, None, progress, job.cancel, until="warm")

            def ingest(kb: WritableKB) -> IngestReport:
                parent.send(("go", {"name": kb.name}))  # plain attributes ingest may read
                wire = _serve(parent, proc, kb, progress, job.cancel, until="done")
                return report_from_wire(wire)

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


def _unchanged(files: Sequence[Path], current_sha: CurrentSha) -> set[str]:
    """Keys of the files whose bytes the knowledge base already holds: not worth embedding
    ahead (the ingest under the lock will find them unchanged)."""
    out = set()
    for path in files:
        try:
            key, sha = file_key(path), hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
        if current_sha(key) == sha:
            out.add(key)
    return out


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
    until: str,
) -> Any:
    """Answers the child's calls on ``kb`` until it sends ``until``; returns that message's
    payload. Raises if the child fails or dies first, ``IngestCancelled`` once ``cancel`` is
    set (within ``_POLL_S``)."""
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
        kind = msg[0]
        if kind == until:
            return msg[1] if len(msg) > 1 else None
        if kind == "progress":
            if progress is not None:
                progress(*msg[1:])  # may raise (a cancelled job): the child is killed
        elif kind == "call" and kb is not None:
            conn.send(_answer(kb, *msg[1:]))
        elif kind == "failed":
            raise IngestWorkerError(msg[1])
        else:  # a bug, not an input: say what arrived
            raise IngestWorkerError(f"unexpected message from the ingestion worker: {kind!r}")


def _died(proc: subprocess.Popen[bytes]) -> IngestWorkerError:
    code = proc.returncode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited ({code})"
    log.error("ingestion worker pid %s %s", proc.pid, how)
    return IngestWorkerError(
        f"the ingestion worker process {how} before finishing; the upload was not ingested, "
        "upload the files again"
    )


def _answer(kb: WritableKB, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """("ok", result) or ("error", message) of ``kb.<name>(*args, **kwargs)``."""
    obj: Any = kb
    parts = name.split(".")
    if any(p.startswith("_") for p in parts):
        return ("error", f"refused call {name!r}")
    try:
        for part in parts:
            obj = getattr(obj, part)
        return ("ok", obj(*args, **kwargs))
    except Exception as exc:  # the child raises it in ingest_paths, which fails the job
        log.exception("ingestion call %s failed", name)
        return ("error", f"{type(exc).__name__}: {exc}")


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
