"""The server-backed stores' guard: errors that mean "out of reach" become
``VectorStoreUnavailable``; others pass through as they are."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragchat.errors import VectorStoreUnavailable
from ragchat.vectorstores.pgvector import conn as pg_conn
from ragchat.vectorstores.qdrant import conn as qdrant_conn
from ragchat.vectorstores.unavailable import guard


def _raises(exc: Exception) -> Callable[[], None]:
    def call() -> None:
        raise exc

    return call


def test_errors_named_by_describe_become_unavailable_others_pass() -> None:
    guarded = guard(lambda exc: f"down: {exc}" if isinstance(exc, ConnectionError) else None)
    with pytest.raises(VectorStoreUnavailable, match="down: refused"):
        guarded(_raises(ConnectionError("refused")))()
    with pytest.raises(KeyError):
        guarded(_raises(KeyError("bug")))()
    with pytest.raises(VectorStoreUnavailable, match="already"):
        guarded(_raises(VectorStoreUnavailable("already")))()
    assert guarded(lambda: 7)() == 7


def test_each_store_names_its_own_unreachable_errors() -> None:
    with pytest.raises(VectorStoreUnavailable, match="Qdrant request failed"):
        qdrant_conn.guarded(_raises(TimeoutError("slow")))()
    with pytest.raises(ValueError):
        qdrant_conn.guarded(_raises(ValueError("bad request")))()

    class PoolTimeout(Exception):
        pass

    with pytest.raises(VectorStoreUnavailable, match="no PostgreSQL connection free"):
        pg_conn.guarded(_raises(PoolTimeout("busy")))()
    with pytest.raises(ValueError):
        pg_conn.guarded(_raises(ValueError("bad request")))()
