"""Shared plumbing of the SQL repositories: short transactions, the clock, ids."""

from __future__ import annotations

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

    def _now(self) -> datetime:
        return self._clock()

    @contextmanager
    def _tx(self, *, write: bool = True) -> Iterator[Session]:
        """A committed-on-exit transaction; driver errors are translated (see database.py)."""
        with translate_errors(), (self._write if write else self._read).begin() as session:
            yield session

    def close(self) -> None:
        """Releases pooled connections."""
        self.engine.dispose()
