"""One server per data directory: ``ragchat serve`` holds an exclusive lock on
``<data_dir>/server.lock`` for as long as it runs, taken before anything in the directory is
touched (migrations, the recovery that fails jobs left unfinished by a crash).

Without it a second server started by mistake on the same directory marks the live server's
running upload failed before it stumbles on the busy port. The lock is ``flock``: the kernel
drops it when its holder dies, so a crashed server never leaves a stale lock behind. Within
one process the lock is counted, so an application started by ``serve`` (or several test
apps) over the same directory take it again without blocking themselves."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ragchat.errors import DataDirInUse

LOCK_NAME = "server.lock"
_held: dict[Path, tuple[IO[str], int]] = {}  # lock file → (open file, holders in this process)
_guard = threading.Lock()


@contextmanager
def hold_data_dir(data_dir: Path) -> Iterator[None]:
    """Holds the data directory's lock for the block; ``DataDirInUse`` (naming the holder's
    pid) when another process holds it."""
    path = (Path(data_dir) / LOCK_NAME).resolve()
    _acquire(path)
    try:
        yield
    finally:
        _release(path)


def _acquire(path: Path) -> None:
    with _guard:
        if path in _held:
            handle, count = _held[path]
            _held[path] = (handle, count + 1)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise DataDirInUse(
                f"another ragchat server (pid {holder}) is using the data directory "
                f"{path.parent}; stop it first, or give this one another --data-dir"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        _held[path] = (handle, 1)


def _release(path: Path) -> None:
    with _guard:
        handle, count = _held[path]
        if count > 1:
            _held[path] = (handle, count - 1)
            return
        del _held[path]
        handle.seek(0)
        handle.truncate()  # the pid must not outlive the lock
        handle.flush()
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()
