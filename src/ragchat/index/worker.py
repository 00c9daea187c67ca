"""Ingestion in a child process, so readers never wait for writers.

An upload ingested in the server process shared its CPU, its GIL and its one embedder with
every query: a 100k-cue transcript made ``/query`` on another knowledge base take ~1 min.
``ProcessIngester`` runs ``ingest_paths`` in a fresh child process (``spawn``, see
``worker_child.py``) with its own embedder, at the lowest CPU priority (nice 19,
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

import dataclasses
import hashlib
import logging
import multiprocessing
import pickle
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Protocol

from ragchat import errors
from ragchat.errors import IngestError, RagchatError
from ragchat.index.base import Embedder, WritableKB
from ragchat.index.ingestion import IngestReport, Progress, file_key, ingest_paths
from ragchat.ingest.chunking import Chunker
from ragchat.settings import Settings

log = logging.getLogger(__name__)

_POLL_S = 0.5
Ingest = Callable[[WritableKB], IngestReport]  # ingest the session's files into a target
CurrentSha = Callable[[str], "str | None"]  # file key -> sha256 the knowledge base holds


class IngestWorkerError(RagchatError):
    """The ingestion child process failed or died; the job fails with this message."""


class Ingester(Protocol):
    def session(
        self,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
        current_sha: CurrentSha | None = None,
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
        current_sha: CurrentSha | None = None,
    ) -> Iterator[Ingest]:
        def ingest(kb: WritableKB) -> IngestReport:
            if progress is None:
                return ingest_paths(kb, paths, chunker)
            return ingest_paths(kb, paths, chunker, progress=progress)

        yield ingest


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """What the child needs: the settings (to load the embedder and set up the runtime) or a
    picklable embedder (a test fake), and its priority."""

    settings: Settings
    embedder: Embedder | None
    idle_priority: bool


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
        self._spec = ChildSpec(settings, embedder, idle_priority)
        self._ctx = multiprocessing.get_context("spawn")

    @contextmanager
    def session(
        self,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
        current_sha: CurrentSha | None = None,
    ) -> Iterator[Ingest]:
        from ragchat.index.worker_child import child_main

        files = [Path(p) for p in paths]
        skip = _unchanged(files, current_sha) if current_sha is not None else set()
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=child_main,
            args=(child, self._spec, files, chunker, skip),
            name="ragchat-ingest-worker",
            daemon=True,  # never outlives the server
        )
        proc.start()
        child.close()
        log.info("ingestion worker pid %s started for %d file(s)", proc.pid, len(files))
        try:
            _serve(parent, proc, None, progress, until="warm")

            def ingest(kb: WritableKB) -> IngestReport:
                parent.send(("go", {"name": kb.name}))  # plain attributes ingest may read
                return _report_from_wire(_serve(parent, proc, kb, progress, until="done"))

            yield ingest
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            parent.close()


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


def _serve(
    conn: Connection,
    proc: BaseProcess,
    kb: WritableKB | None,
    progress: Progress | None,
    *,
    until: str,
) -> Any:
    """Answers the child's calls on ``kb`` until it sends ``until``; returns that message's
    payload. Raises if the child fails or dies first."""
    while True:
        if not conn.poll(_POLL_S):
            if not proc.is_alive() and not conn.poll(0):
                raise _died(proc)
            continue
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            proc.join(5)
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


def _died(proc: BaseProcess) -> IngestWorkerError:
    code = proc.exitcode
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


def report_to_wire(report: IngestReport) -> dict[str, Any]:
    """An ``IngestReport`` that pickles (``IngestError``'s two-argument ``__init__`` does not
    unpickle): its errors as (class name, source, reason)."""
    wire = dataclasses.asdict(dataclasses.replace(report, errors=[]))
    wire["errors"] = [(type(e).__name__, e.source, e.reason) for e in report.errors]
    return wire


def _report_from_wire(wire: dict[str, Any]) -> IngestReport:
    errs = []
    for name, source, reason in wire.pop("errors"):
        cls = getattr(errors, name, IngestError)
        if not (isinstance(cls, type) and issubclass(cls, IngestError)):
            cls = IngestError
        errs.append(cls(source, reason))
    return IngestReport(**wire, errors=errs)


def build_ingester(settings: Settings, embedder: Embedder) -> Ingester:
    """What upload jobs ingest with, chosen once at start-up (``api.ingest_runner``): a child
    process loads the configured model itself; any other embedder (a test fake, possibly
    behind the fast path's wrappers) is sent to it, so it must pickle."""
    if settings.api.ingest_runner == "thread":
        return InProcessIngester()
    from ragchat.index.embedder import is_loaded

    inner: Any = embedder
    while getattr(inner, "inner", None) is not None:  # the fast path's wrappers
        inner = inner.inner
    return ProcessIngester(settings, embedder=None if is_loaded(inner) else inner)
