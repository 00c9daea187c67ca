"""Shared plumbing of the SQL repositories: short transactions, the clock, ids.

SQLite takes one writer at a time, and a writer that finds the lock taken sleeps in its busy
handler (1 ms, 2, 5, … up to 100 ms per retry) holding a pooled connection. Under many
concurrent turns that turned a 1 ms commit into seconds of waiting (benchmarks/bench_load.py,
docs/security.md class 6), so this process queues its own SQLite writers on a lock before
they take a connection; the busy timeout still arbitrates with other processes (the CLI)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from ragchat.store.database import translate_errors, write_engine

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


class SqlCore:
    """Owns the engine; each repository method is one short transaction via ``_tx``."""

    def __init__(self, engine: Engine, *, clock: Clock = utcnow) -> None:
        self.engine = engine
        self._clock = clock
        self._read = sessionmaker(engine, expire_on_commit=False)
        self._write = sessionmaker(write_engine(engine), expire_on_commit=False)
        # Reentrant: a nested write would deadlock on SQLite's own lock anyway, not on this.
        self._writers = threading.RLock() if engine.dialect.name == "sqlite" else None

    def _now(self) -> datetime:
        return self._clock()

    @contextmanager
    def _tx(self, *, write: bool = True) -> Iterator[Session]:
        """A committed-on-exit transaction; driver errors are translated (see database.py).
        SQLite writes wait for this process's other writers first (see the module docstring)."""
        if write and self._writers is not None:
            with self._writers, translate_errors(), self._write.begin() as session:
                yield session
            return
        with translate_errors(), (self._write if write else self._read).begin() as session:
            yield session

    def close(self) -> None:
        """Releases pooled connections."""
        self.engine.dispose()
