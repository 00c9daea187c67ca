"""Recorded migrations, the default database location and unreachable databases."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import Column, Connection, Integer, MetaData, Table, inspect, select

from ragchat.errors import ConfigError, StoreUnavailable
from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store, database_url
from ragchat.store.migrations import (
    MIGRATIONS,
    Migration,
    applied_versions,
    migrate,
    schema_migrations,
)


def test_migrations_are_recorded_and_run_once(store: SqlStore, settings: Settings) -> None:
    assert applied_versions(store.engine) == [1]
    assert migrate(store.engine) == []
    calls: list[int] = []

    def v2(conn: Connection) -> None:
        calls.append(2)
        Table("extra", MetaData(), Column("id", Integer, primary_key=True)).create(conn)

    with_v2 = (*MIGRATIONS, Migration(2, "add extra", v2))
    assert migrate(store.engine, with_v2) == [2]
    assert migrate(store.engine, with_v2) == []
    build_store(settings, migrations=with_v2).close()
    assert calls == [2]
    assert "extra" in inspect(store.engine).get_table_names()
    with store.engine.connect() as conn:
        rows = conn.execute(select(schema_migrations).order_by(schema_migrations.c.version))
        assert [(r.version, r.name) for r in rows] == [(1, "initial schema"), (2, "add extra")]
    with pytest.raises(ConfigError, match="newer"):
        migrate(store.engine)  # this code knows v1 only


def test_a_failing_migration_leaves_nothing_behind(store: SqlStore) -> None:
    def broken(conn: Connection) -> None:
        Table("half", MetaData(), Column("id", Integer, primary_key=True)).create(conn)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(store.engine, (*MIGRATIONS, Migration(2, "broken", broken)))
    assert applied_versions(store.engine) == [1]
    assert "half" not in inspect(store.engine).get_table_names()


def test_duplicate_versions_are_rejected(store: SqlStore) -> None:
    with pytest.raises(ConfigError):
        migrate(store.engine, (*MIGRATIONS, Migration(1, "again", lambda conn: None)))


def test_default_is_a_sqlite_file_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=None)
    assert database_url(settings).endswith("/data/ragchat.sqlite3")
    store = build_store(settings)
    try:
        store.ensure_user("alice")
    finally:
        store.close()
    assert (tmp_path / "data" / "ragchat.sqlite3").is_file()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_postgres_is_store_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    url = f"postgresql+psycopg://ragchat:ragchat@127.0.0.1:{_closed_port()}/nowhere"
    settings = Settings(data_dir=tmp_path, database_url=url, database_connect_timeout_s=2)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        build_store(settings)
    assert time.monotonic() - started < 10


def test_unopenable_sqlite_is_store_unavailable(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing-dir' / 'x.sqlite3'}"
    with pytest.raises(StoreUnavailable):
        build_store(Settings(data_dir=tmp_path, database_url=url))
