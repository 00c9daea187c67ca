"""The one-writer lock every store's knowledge bases take on this machine
(``VectorStore.write_lock``): a ``flock`` on a file in the knowledge base's folder (embedded)
or under ``<data_dir>/locks`` (Qdrant, pgvector)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragchat.errors import IndexStateError, IngestCancelled

LOCK = ".lock"
# How long a second writer waits for the first before giving up with a clear error.
LOCK_TIMEOUT_S = 10.0


class WriteLock:
    """The one writer of a knowledge base (``flock``: released by the kernel when the process
    dies, so a kill -9 never leaves it held). Server workers and the CLI on one data directory
    take the same lock, so their writes to one knowledge base queue instead of colliding."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        if not _same_file(fd, self.path / LOCK):
            # The folder was deleted (a failed first ingest) while we waited: our lock is on a
            # file nobody else will ever lock again, so take the new one instead.
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(
        self,
        timeout_s: float | None,
        *,
        cancel: threading.Event | None = None,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        """Waits for the lock; ``timeout_s`` None waits as long as it takes. ``on_wait`` is
        called once when the lock is busy (a job says it waits); ``cancel`` set stops the wait
        with ``IngestCancelled``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        waited = False
        while not self.try_acquire():
            if cancel is not None and cancel.is_set():
                raise IngestCancelled("stopped while waiting for the knowledge base")
            if deadline is not None and time.monotonic() >= deadline:
                raise IndexStateError(
                    f"knowledge base {self.path.name!r} is being written by another "
                    "ingestion; try again when it has finished"
                )
            if not waited and on_wait is not None:
                on_wait()
            waited = True
            time.sleep(0.05)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
