"""Parsing untrusted files in a separate process, under a time and a memory limit.

A crafted upload (a PDF claiming a million pages, a decompression bomb, an endless content
stream, JSON nested 200,000 levels deep) must neither hold the ingestion worker for minutes
nor take the server's memory. Each file is parsed by a child process (``python -m
ragchat.ingest.sandbox``) whose address space is capped (``RLIMIT_AS``) and which is killed
when the file's time is up, or at once when the server shuts down (``cancel``). The child is
kept for the next files (starting one costs about a second); a killed one is replaced on the
next file. Only the documents come back, pickled over a pipe.

A file's time is a CPU budget that grows with its size (``parse_budget``), under the wall-clock
ceiling ``timeout_s``: a flat two minutes per file let a 21 KB PDF (20 pages sharing one 6 MB
content stream) hold an upload slot for the whole limit."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from ragchat.errors import IngestCancelled, IngestError
from ragchat.ingest import degenerate
from ragchat.ingest.registry import bounded_loader
from ragchat.ingest.text_utils import too_much_text
from ragchat.types import LoadedDocument

log = logging.getLogger(__name__)

_POLL_S = 0.05
_START_TIMEOUT_S = 120.0  # a new child's imports, on a loaded machine


@dataclass(frozen=True)
class ParseLimits:
    """What one file may cost to parse; None or 0 = no limit."""

    timeout_s: float | None = None
    memory_mb: int | None = None
    max_chars: int | None = None
    max_pages: int | None = None


def parse_file(path: Path, limits: ParseLimits) -> list[LoadedDocument]:
    """Loads one file in this process (the child's work). Any failure is an ``IngestError``
    whose reason names no server path."""
    source = str(path)
    loader = bounded_loader(
        path, max_chars=limits.max_chars or None, max_pages=limits.max_pages or None
    )
    try:
        docs = loader.load(path)
    except IngestError:
        raise
    except RecursionError as exc:
        raise IngestError(source, "nested too deeply to parse") from exc
    except MemoryError as exc:
        raise IngestError(source, "parsing it needs more memory than allowed") from exc
    except Exception as exc:  # a loader bug: still this file's failure, not the upload's
        raise IngestError(source, f"unexpected {type(exc).__name__} while parsing") from exc
    if limits.max_chars:
        chars = sum(len(s.text) for d in docs for s in d.sections)
        if chars > limits.max_chars:
            raise IngestError(source, too_much_text(limits.max_chars))
    degenerate.check(docs, source)
    return docs


class ParseWorker:
    """Parses files one at a time in a child process; thread-safe (callers queue)."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None

    def load(self, path: Path) -> list[LoadedDocument]:
        """The documents of ``path``; ``IngestError`` when it cannot be parsed within the
        limits, ``IngestCancelled`` when ``cancel`` was called."""
        try:
            size = path.stat().st_size
        except OSError:  # the child says what is wrong with it
            size = 0
        timeout = self.limits.timeout_s or None
        budget = parse_budget(size, timeout)
        # Wall time: twice the CPU budget, so a crafted file starved of CPU (the ingestion
        # runs at idle priority) still frees its upload slot soon; never past the ceiling.
        wall = min(timeout, BUDGET_WALL_FACTOR * budget) if timeout and budget else timeout
        limit = (
            "the limit per file" if wall == timeout else f"the limit for a file of {_size(size)}"
        )
        with self._lock:
            if self._cancelled.is_set():
                raise IngestCancelled("ingestion cancelled")
            try:
                send, recv = self._start()
                deadline = time.monotonic() + wall if wall else None
                assert self._proc is not None
                cpu = _CpuClock(self._proc.pid)
                send.send((str(path), self.limits))
                while not recv.poll(_POLL_S):
                    if self._cancelled.is_set():
                        self._stop()
                        raise IngestCancelled("ingestion cancelled")
                    if deadline is not None and time.monotonic() > deadline:
                        self._stop()
                        raise IngestError(
                            str(path),
                            f"parsing took longer than {wall:.3g} s ({limit})",
                        )
                    if budget is not None and cpu.used() > budget:
                        self._stop()
                        raise IngestError(
                            str(path),
                            f"parsing took more than {budget:.1f} s of CPU, the limit for a file "
                            f"of {_size(size)} (bigger files get more, up to "
                            f"{timeout:g} s)",
                        )
                kind, value = recv.recv()
            except (EOFError, OSError) as exc:  # the child died: out of memory, or crashed
                self._stop()
                raise IngestError(
                    str(path), "the parser stopped (the file needs more memory than allowed?)"
                ) from exc
            if kind == "ok":
                docs: list[LoadedDocument] = value
                return docs
            raise IngestError(str(path), str(value))

    def cancel(self) -> None:
        """Stops the parse under way (its caller gets ``IngestCancelled``) and any later one."""
        self._cancelled.set()

    def close(self) -> None:
        self.cancel()
        with self._lock:
            self._stop()

    def _start(self) -> tuple[Connection, Connection]:
        """The running child, else a new one once it says it is ready (its imports do not
        count against the first file's time)."""
        if self._proc is not None and self._proc.poll() is None:
            assert self._send is not None and self._recv is not None
            return self._send, self._recv
        self._stop()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        memory = str(self.limits.memory_mb or 0)
        cmd = [sys.executable, "-m", "ragchat.ingest.sandbox", str(to_child_r), str(from_child_w)]
        try:
            self._proc = subprocess.Popen(
                [*cmd, memory],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                # The parser needs no settings (its limits come over the pipe): keep the
                # server's secrets (API keys, database URL) out of reach of a crafted file.
                env={k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")},
            )
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._send = Connection(to_child_w, readable=False)
        self._recv = Connection(from_child_r, writable=False)
        started = time.monotonic()
        while not self._recv.poll(_POLL_S):
            if self._cancelled.is_set():
                self._stop()
                raise IngestCancelled("ingestion cancelled")
            if self._proc.poll() is not None or time.monotonic() - started > _START_TIMEOUT_S:
                raise EOFError("the parser did not start")
        self._recv.recv()  # ("ready", None)
        return self._send, self._recv

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.wait()
        for conn in (self._send, self._recv):
            if conn is not None:
                conn.close()
        self._send = self._recv = None


BUDGET_BASE_S = 5.0  # CPU seconds any file may take: a small file parses in well under one
BUDGET_PER_MB_S = 10.0  # and this much more per MB (a 500-page text PDF of 5 MB: ~20 s)
BUDGET_WALL_FACTOR = 2.0  # wall-clock seconds per CPU second of budget


def parse_budget(size_bytes: int, ceiling: float | None) -> float | None:
    """CPU seconds a file of ``size_bytes`` may spend being parsed: a few seconds for a small
    file, more for a big one, never more than ``ceiling`` (``ingest.parse_timeout_s``, which
    also bounds the wall-clock time, as does ``BUDGET_WALL_FACTOR`` x the budget). Counted in
    CPU, so a loaded machine does not fail honest files that need little of it; None = no
    limit."""
    if not ceiling:
        return None
    return min(ceiling, BUDGET_BASE_S + BUDGET_PER_MB_S * size_bytes / 1_000_000)


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{max(1, round(n / 1000))} KB"


class _CpuClock:
    """CPU seconds a child used since this was made (Linux ``/proc``; elsewhere wall time)."""

    _TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __init__(self, pid: int) -> None:
        self.stat = Path(f"/proc/{pid}/stat")
        self.start = self._now()

    def _now(self) -> float:
        try:
            fields = self.stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return time.monotonic()
        return (int(fields[11]) + int(fields[12])) / self._TICK  # utime + stime

    def used(self) -> float:
        return self._now() - self.start


def _serve(read_fd: int, write_fd: int, memory_mb: int) -> None:
    """The child: parse each path it is sent, answer ("ok", docs) or ("error", reason)."""
    if memory_mb > 0:
        import resource

        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    recv = Connection(read_fd, writable=False)
    send = Connection(write_fd, readable=False)
    send.send(("ready", None))
    while True:
        try:
            path, limits = recv.recv()
        except EOFError:  # the server closed the pipe: it is done with us
            return
        try:
            send.send(("ok", parse_file(Path(path), limits)))
        except IngestError as exc:
            send.send(("error", exc.reason))
        except MemoryError:
            send.send(("error", "parsing it needs more memory than allowed"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.ERROR)
    # pypdf logs every object it recovers from: a crafted file would flood the server's log.
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    _serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
