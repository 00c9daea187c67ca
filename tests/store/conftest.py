"""Backends for the store contract tests: SQLite always; Postgres when
``RAGCHAT_TEST_DATABASE_URL`` is set (``scripts/postgres start`` prints one). Each test gets a
fresh database: a new SQLite file, or a new Postgres schema dropped afterwards."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store
from ragchat.store.database import scratch_schema

PG_URL = os.environ.get("RAGCHAT_TEST_DATABASE_URL", "")
BACKENDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.integration, id="postgres"),
]


class FakeClock:
    """Deterministic time: each reading is one millisecond after the previous one."""

    def __init__(self, start: datetime = datetime(2025, 1, 1, tzinfo=UTC)) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            self._now += timedelta(milliseconds=1)
            return self._now

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._now += delta


@contextmanager
def fresh_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: a new SQLite file, or a new Postgres schema dropped
    afterwards (skips the test when no Postgres is configured)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite3'}"
        return
    if not PG_URL:
        pytest.skip("RAGCHAT_TEST_DATABASE_URL is not set (see scripts/postgres)")
    with scratch_schema(PG_URL) as url:
        yield url


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", database_url=database_url, session_ttl_minutes=60)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


StoreFactory = Callable[[], SqlStore]


@pytest.fixture
def open_store(settings: Settings, clock: FakeClock) -> Iterator[StoreFactory]:
    """Opens stores on the test's database (a second one simulates a restart)."""
    opened: list[SqlStore] = []

    def open_() -> SqlStore:
        opened.append(build_store(settings, clock=clock))
        return opened[-1]

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: StoreFactory) -> SqlStore:
    return open_store()
