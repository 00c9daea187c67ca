"""Ingestion in a child process, so readers never wait for writers.

An upload ingested in the server process shared its CPU, its GIL and its one embedder with
every query: a 100k-cue transcript made ``/query`` on another knowledge base take ~1 min.
``ProcessIngester`` has the signature of ``ingest_paths`` and runs it in a fresh child process
(``spawn``) with its own embedder, at the lowest CPU priority (nice 19, ``SCHED_IDLE`` where
Linux allows it) and one thread: parsing, chunking and embedding only use CPU the server
leaves idle, and the server's embedder stays free for readers.

The knowledge base is not opened in the child. The child's ``ingest_paths`` works on a
``_RemoteKB`` whose every read and write is a call answered by the parent on the private
instance the job writes to (``KnowledgeBaseRegistry.writing``): the commit happens where it
always did, through the same API (atomic as that API is), on any vector store backend, and the
registry swaps the new state in as before. A child that dies (killed, out of memory) fails the
job with ``IngestWorkerError``; the parent discards the private instance and keeps serving.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import pickle
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

from ragchat import errors
from ragchat.errors import IngestError, RagchatError
from ragchat.index.base import Embedder, WritableKB
from ragchat.index.ingestion import IngestReport, Progress, ingest_paths
from ragchat.ingest.chunking import Chunker
from ragchat.settings import Settings

log = logging.getLogger(__name__)

_POLL_S = 0.5
_SUBOBJECTS = frozenset({"store"})  # attributes of a WritableKB that are objects, not methods


class IngestWorkerError(RagchatError):
    """The ingestion child process failed or died; the job fails with this message."""


Ingester = Callable[..., IngestReport]  # ingest_paths(target, paths, chunker, *, progress=...)


@dataclasses.dataclass(frozen=True)
class _Spec:
    """What the child needs: the settings (to load the embedder and set up the runtime) or a
    picklable embedder (a test fake), and its priority."""

    settings: Settings
    embedder: Embedder | None
    idle_priority: bool


class ProcessIngester:
    """``ingest_paths`` in a child process (module docstring). One child per job: a crash or a
    parser that bloated its memory takes nothing with it, at the price of loading the
    embedder per job (a second or two, at idle priority).

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
        self._spec = _Spec(settings, embedder, idle_priority)
        self._ctx = multiprocessing.get_context("spawn")

    def __call__(
        self,
        kb: WritableKB,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        progress: Progress | None = None,
    ) -> IngestReport:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_child_main,
            args=(child, self._spec, [Path(p) for p in paths], chunker),
            name="ragchat-ingest-worker",
            daemon=True,  # never outlives the server
        )
        proc.start()
        child.close()
        log.info("ingestion worker pid %s started for %d file(s)", proc.pid, len(paths))
        try:
            return _serve(parent, proc, kb, progress)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join(10)
            parent.close()


def _serve(
    conn: Connection,
    proc: multiprocessing.process.BaseProcess,
    kb: WritableKB,
    progress: Progress | None,
) -> IngestReport:
    """Answers the child's calls on ``kb`` until it reports; raises if it dies first."""
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
        if kind == "progress":
            if progress is not None:
                progress(*msg[1:])  # may raise (a cancelled job): the child is killed
        elif kind == "call":
            conn.send(_answer(kb, *msg[1:]))
        elif kind == "done":
            return _report_from_wire(msg[1])
        elif kind == "failed":
            raise IngestWorkerError(msg[1])
        else:  # a bug, not an input: say what arrived
            raise IngestWorkerError(f"unexpected message from the ingestion worker: {kind!r}")


def _died(proc: multiprocessing.process.BaseProcess) -> IngestWorkerError:
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


def _report_to_wire(report: IngestReport) -> dict[str, Any]:
    # IngestError does not unpickle (its __init__ takes two arguments): send its fields.
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
        return ingest_paths
    from ragchat.index.embedder import is_loaded

    inner: Any = embedder
    while getattr(inner, "inner", None) is not None:  # the fast path's wrappers
        inner = inner.inner
    return ProcessIngester(settings, embedder=None if is_loaded(inner) else inner)


# -- the child --------------------------------------------------------------------------------


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
        self._conn.send(("call", name, args, kwargs))
        status, value = self._conn.recv()
        if status != "ok":
            raise IngestWorkerError(value)
        return value


class _RemoteKB(_Remote):
    """The knowledge base as the child sees it: the parent's instance, the child's embedder."""

    def __init__(self, conn: Connection, embedder: Embedder) -> None:
        super().__init__(conn)
        self.embedder = embedder


def _lower_priority(idle: bool) -> None:
    """Nice 19, and ``SCHED_IDLE`` (runs only when a core is otherwise idle) where allowed."""
    try:
        os.nice(19)
    except OSError:
        pass
    if idle and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:
            pass


def _child_main(conn: Connection, spec: _Spec, paths: list[Path], chunker: Chunker) -> None:
    _lower_priority(spec.idle_priority)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    progress: Progress = lambda stage, done, total: conn.send(("progress", stage, done, total))  # noqa: E731
    try:
        embedder = spec.embedder
        if embedder is None:
            from ragchat.index.embedder import load_embedder

            settings = spec.settings
            one_thread = settings.embedding.model_copy(update={"threads": 1})
            embedder = load_embedder(settings.model_copy(update={"embedding": one_thread}))
        remote = cast(WritableKB, _RemoteKB(conn, embedder))  # duck-typed: calls the parent's
        report = ingest_paths(remote, paths, chunker, progress=progress)
    except BaseException as exc:  # reported, then the child exits
        conn.send(("failed", str(exc) if isinstance(exc, RagchatError) else _describe(exc)))
        return
    conn.send(("done", _report_to_wire(report)))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "a file is nested too deeply to parse"
    if isinstance(exc, MemoryError):
        return "a file needs more memory than the ingestion worker has"
    return f"{type(exc).__name__}: {exc}"
