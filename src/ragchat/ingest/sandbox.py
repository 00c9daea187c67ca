"""Parsing untrusted files in a separate process, under a time and a memory limit.

A crafted upload (a PDF claiming a million pages, a decompression bomb, an endless content
stream, JSON nested 200,000 levels deep) must neither hold the ingestion worker for minutes
nor take the server's memory. Each file is parsed by a child process (``python -m
ragchat.ingest.sandbox``) whose address space is capped (``RLIMIT_AS``) and which is killed
when the file's time is up, or at once when the server shuts down (``cancel``). The child is
kept for the next files (starting one costs about a second); a killed one is replaced on the
next file. Only the documents come back, pickled over a pipe."""

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
from ragchat.ingest.registry import bounded_loader
from ragchat.ingest.text_utils import too_much_text
from ragchat.types import LoadedDocument

log = logging.getLogger(__name__)

_POLL_S = 0.05


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
        with self._lock:
            if self._cancelled.is_set():
                raise IngestCancelled("ingestion cancelled")
            send, recv = self._start()
            timeout = self.limits.timeout_s or None
            deadline = time.monotonic() + timeout if timeout else None
            try:
                send.send((str(path), self.limits))
                while not recv.poll(_POLL_S):
                    if self._cancelled.is_set():
                        self._stop()
                        raise IngestCancelled("ingestion cancelled")
                    if deadline is not None and time.monotonic() > deadline:
                        self._stop()
                        raise IngestError(
                            str(path),
                            f"parsing took longer than {timeout:g} s (the limit per file)",
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


def _serve(read_fd: int, write_fd: int, memory_mb: int) -> None:
    """The child: parse each path it is sent, answer ("ok", docs) or ("error", reason)."""
    if memory_mb > 0:
        import resource

        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    recv = Connection(read_fd, writable=False)
    send = Connection(write_fd, readable=False)
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
