"""Recorded migrations, the default database location and unreachable databases."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import Column, Connection, Integer, MetaData, Table, inspect, select, text

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

KNOWN = [m.version for m in MIGRATIONS]
NEXT = KNOWN[-1] + 1


def test_migrations_are_recorded_and_run_once(store: SqlStore, settings: Settings) -> None:
    assert applied_versions(store.engine) == KNOWN
    assert migrate(store.engine) == []
    calls: list[int] = []

    def extra(conn: Connection) -> None:
        calls.append(NEXT)
        Table("extra", MetaData(), Column("id", Integer, primary_key=True)).create(conn)

    with_next = (*MIGRATIONS, Migration(NEXT, "add extra", extra))
    assert migrate(store.engine, with_next) == [NEXT]
    assert migrate(store.engine, with_next) == []
    build_store(settings, migrations=with_next).close()
    assert calls == [NEXT]
    assert "extra" in inspect(store.engine).get_table_names()
    with store.engine.connect() as conn:
        rows = conn.execute(select(schema_migrations).order_by(schema_migrations.c.version))
        recorded = [(r.version, r.name) for r in rows]
    assert recorded[0] == (1, "initial schema") and recorded[-1] == (NEXT, "add extra")
    with pytest.raises(ConfigError, match="newer"):
        migrate(store.engine)  # this code does not know the extra version


def test_v2_adds_the_crisis_flag_to_a_v1_database(store: SqlStore) -> None:
    """A database created before v2 (no ``crisis_at``) gets the column, keeping its rows."""
    store.ensure_user("alice")
    conv = store.create_conversation("alice", "old")
    with store.engine.begin() as conn:
        conn.execute(text("ALTER TABLE conversations DROP COLUMN crisis_at"))
        conn.execute(schema_migrations.delete().where(schema_migrations.c.version >= 2))
    assert applied_versions(store.engine) == [1]
    assert migrate(store.engine) == KNOWN[1:]
    assert store.get_conversation("alice", conv.id).title == "old"
    assert store.flag_crisis("alice", conv.id).crisis


def test_a_failing_migration_leaves_nothing_behind(store: SqlStore) -> None:
    def broken(conn: Connection) -> None:
        Table("half", MetaData(), Column("id", Integer, primary_key=True)).create(conn)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(store.engine, (*MIGRATIONS, Migration(NEXT, "broken", broken)))
    assert applied_versions(store.engine) == KNOWN
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
