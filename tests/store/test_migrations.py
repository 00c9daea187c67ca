"""Recorded migrations, the default database location and unreachable databases."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    Table,
    create_engine,
    inspect,
    select,
)

from ragchat.errors import ConfigError, StoreUnavailable
from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store, database_url
from ragchat.store.database import create_store_engine
from ragchat.store.migrations import (
    MIGRATIONS,
    Migration,
    applied_versions,
    migrate,
    schema_migrations,
)
from ragchat.store.models import Base

KNOWN = [(m.version, m.name) for m in MIGRATIONS]
NEXT = len(MIGRATIONS) + 1


def test_migrations_are_recorded_and_run_once(store: SqlStore, settings: Settings) -> None:
    assert applied_versions(store.engine) == [v for v, _ in KNOWN] == list(range(1, NEXT))
    assert migrate(store.engine) == []
    calls: list[int] = []

    def extra(conn: Connection) -> None:
        calls.append(NEXT)
        Table("extra", MetaData(), Column("id", Integer, primary_key=True)).create(conn)

    with_extra = (*MIGRATIONS, Migration(NEXT, "add extra", extra))
    assert migrate(store.engine, with_extra) == [NEXT]
    assert migrate(store.engine, with_extra) == []
    build_store(settings, migrations=with_extra).close()
    assert calls == [NEXT]
    assert "extra" in inspect(store.engine).get_table_names()
    with store.engine.connect() as conn:
        rows = conn.execute(select(schema_migrations).order_by(schema_migrations.c.version))
        assert [(r.version, r.name) for r in rows] == [*KNOWN, (NEXT, "add extra")]
    with pytest.raises(ConfigError, match="newer"):
        migrate(store.engine)  # this code does not know the extra migration


def _schema(engine: Engine, tables: Sequence[str]) -> dict[str, Any]:
    """What the database holds: per table its columns (name, nullable), indexes, unique
    constraints and foreign keys, comparable across a migrated and a created database."""
    inspector = inspect(engine)
    out: dict[str, Any] = {}
    for table in tables:
        out[table] = {
            "columns": sorted((c["name"], c["nullable"]) for c in inspector.get_columns(table)),
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]))
                for i in inspector.get_indexes(table)
                if not i.get("duplicates_constraint")  # Postgres backs UNIQUE with an index
            ),
            "unique": sorted(
                tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)
            ),
            "foreign_keys": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in inspector.get_foreign_keys(table)
            ),
        }
    return out


def test_replaying_every_migration_gives_the_models_schema(store: SqlStore) -> None:
    """A column added to models.py without its migration (or a migration that differs from
    models.py) fails here, on SQLite and Postgres."""
    tables = sorted(Base.metadata.tables)
    migrated = _schema(store.engine, tables)
    fresh = create_engine("sqlite://")
    Base.metadata.create_all(fresh)
    expected = _schema(fresh, tables)
    assert migrated == expected


def test_v1_is_frozen(store: SqlStore) -> None:
    """v1 creates the tables as they shipped, not as models.py has them now."""
    v1_only = create_engine("sqlite://")
    assert migrate(v1_only, MIGRATIONS[:1]) == [1]
    columns = {c["name"] for c in inspect(v1_only).get_columns("conversations")}
    assert "assigned_agent" in columns and "user_profile" not in columns
    assert migrate(v1_only) == list(range(2, NEXT))  # later migrations apply on top


def test_v2_moves_the_profile_from_message_metadata_to_the_conversation(
    settings: Settings, database_url: str
) -> None:
    """Before v2 the companion's profile facts lived in assistant message metadata; upgrading
    keeps each conversation's latest one."""
    engine = create_store_engine(database_url)
    try:
        assert migrate(engine, MIGRATIONS[:1]) == [1]
        old = SqlStore(engine)
        old_rows = _legacy_rows(engine)
        with engine.begin() as conn:
            for table, rows in old_rows.items():
                conn.execute(table.insert(), rows)
        assert migrate(engine) == list(range(2, NEXT))
        new = SqlStore(engine)
        assert new.get_conversation("ann", "c-ann").user_profile == {"name": "Annie"}
        assert new.get_conversation("ann", "c-none").user_profile == {}
        assert old.get_conversation("ann", "c-none").assigned_agent == "support"
    finally:
        engine.dispose()


def _legacy_rows(engine: Engine) -> dict[Table, list[dict[str, Any]]]:
    meta = MetaData()
    meta.reflect(engine, only=["users", "conversations", "messages"])
    now = datetime(2025, 1, 1, tzinfo=UTC)
    users = [
        {
            "id": "ann",
            "kind": "anonymous",
            "display_name": None,
            "created_at": now,
            "last_seen_at": now,
        }
    ]
    conversations = [
        {
            "id": cid,
            "user_id": "ann",
            "title": None,
            "assigned_agent": agent,
            "status": "active",
            "created_at": now,
            "updated_at": now,
            "last_activity_at": now,
            "expires_at": None,
        }
        for cid, agent in (("c-ann", "companion"), ("c-none", "support"))
    ]

    def message(cid: str, seq: int, role: str, metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"{cid}-{seq}",
            "conversation_id": cid,
            "seq": seq,
            "role": role,
            "content": "x",
            "agent": None,
            "citations": [],
            "metadata": metadata,
            "status": "complete",
            "created_at": now,
            "updated_at": now,
        }

    messages = [
        message("c-ann", 1, "user", {}),
        message("c-ann", 2, "assistant", {"user_profile": {"name": "Ann"}}),
        message("c-ann", 3, "user", {}),
        message("c-ann", 4, "assistant", {"user_profile": {"name": "Annie"}}),
        message("c-ann", 5, "assistant", {"routing": {"agent": "companion"}}),
        message("c-none", 1, "assistant", {"note": "no user_profile here"}),
    ]
    return {
        meta.tables["users"]: users,
        meta.tables["conversations"]: conversations,
        meta.tables["messages"]: messages,
    }


def test_v3_adds_the_crisis_flag_keeping_the_conversations(database_url: str) -> None:
    """A v2 database (no ``crisis_at``) gets the column; its conversations start unflagged."""
    engine = create_store_engine(database_url)
    try:
        assert migrate(engine, MIGRATIONS[:2]) == [1, 2]
        assert "crisis_at" not in {c["name"] for c in inspect(engine).get_columns("conversations")}
        with engine.begin() as conn:
            for table, rows in _legacy_rows(engine).items():
                conn.execute(table.insert(), rows)
        assert migrate(engine) == list(range(3, NEXT))
        store = SqlStore(engine)
        assert not store.get_conversation("ann", "c-ann").crisis
        assert store.flag_crisis("ann", "c-ann").crisis
        assert store.get_conversation("ann", "c-none").assigned_agent == "support"
    finally:
        engine.dispose()


def test_a_failing_migration_leaves_nothing_behind(store: SqlStore) -> None:
    def broken(conn: Connection) -> None:
        Table("half", MetaData(), Column("id", Integer, primary_key=True)).create(conn)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(store.engine, (*MIGRATIONS, Migration(NEXT, "broken", broken)))
    assert applied_versions(store.engine) == list(range(1, NEXT))
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


def test_v6_keeps_knowledge_bases_whose_names_differ_only_in_case(database_url: str) -> None:
    """Names became one without regard to case: the oldest keeps its name, the others get a
    suffix, nothing is lost."""
    from sqlalchemy import text

    engine = create_store_engine(database_url)
    try:
        assert migrate(engine, MIGRATIONS[:5]) == [1, 2, 3, 4, 5]
        with engine.begin() as conn:
            for i, name in enumerate(("Sailing", "sailing", "SAILING", "tides")):
                conn.execute(
                    text(
                        "INSERT INTO knowledge_bases (storage, name, owner_id, description, "
                        "default_agent, shared, created_at, updated_at) VALUES (:s, :n, NULL, "
                        "'', NULL, :f, :t, :t)"
                    ),
                    {"s": f"{name}-store", "n": name, "f": False, "t": datetime(2025, 1, 1 + i)},
                )
        assert migrate(engine) == list(range(6, NEXT))
        store = SqlStore(engine)
        names = sorted(row.name for row in store.list_kbs())
        assert names == ["SAILING-3", "Sailing", "sailing-2", "tides"]
        assert store.find_kb("sailing").storage == "Sailing-store"  # type: ignore[union-attr]
    finally:
        engine.dispose()
