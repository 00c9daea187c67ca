"""Ordered, recorded schema migrations (no Alembic).

``schema_migrations`` records each applied version. ``migrate`` applies the pending ones in
version order, all in one transaction (serialised across processes: an advisory lock on
Postgres, ``BEGIN IMMEDIATE`` on SQLite), so running it at every startup is idempotent.

To change the schema, append a ``Migration`` with the next version whose ``apply`` issues the
DDL through SQLAlchemy constructs (portable). v1 creates the tables from ``models.py``, so on a
fresh database it already has every later column: a migration that adds a column checks for it
first (``_add_column``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    inspect,
    select,
    text,
)
from sqlalchemy.types import TypeEngine

from ragchat.errors import ConfigError
from ragchat.store._core import utcnow
from ragchat.store.engine import translate_errors, write_engine
from ragchat.store.models import Base, UTCDateTime

log = logging.getLogger(__name__)

_PG_LOCK_KEY = 0x7261_6763  # "ragc": serialises concurrent startups on one Postgres database

schema_migrations = Table(
    "schema_migrations",
    MetaData(),
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("applied_at", UTCDateTime(), nullable=False),
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _v1_initial(conn: Connection) -> None:
    Base.metadata.create_all(conn)


def _add_column(conn: Connection, table: str, column: str, type_: TypeEngine[Any]) -> None:
    """``ALTER TABLE … ADD COLUMN`` (nullable), unless v1 already created it."""
    if column in {c["name"] for c in inspect(conn).get_columns(table)}:
        return
    preparer = conn.dialect.identifier_preparer
    sql_type = type_.compile(dialect=conn.dialect)
    conn.execute(
        text(f"ALTER TABLE {preparer.quote(table)} ADD COLUMN {preparer.quote(column)} {sql_type}")
    )


def _v2_conversation_crisis(conn: Connection) -> None:
    _add_column(conn, "conversations", "crisis_at", UTCDateTime())


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", _v1_initial),
    Migration(2, "conversations.crisis_at", _v2_conversation_crisis),
)


def migrate(engine: Engine, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Applies pending migrations in order; returns the versions applied now."""
    ordered = sorted(migrations, key=lambda m: m.version)
    versions = [m.version for m in ordered]
    if len(set(versions)) != len(versions) or (versions and versions[0] < 1):
        raise ConfigError(f"migration versions must be unique and >= 1: {versions}")
    with translate_errors(), write_engine(engine).begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        schema_migrations.create(conn, checkfirst=True)
        applied = set(conn.scalars(select(schema_migrations.c.version)))
        newest_known = versions[-1] if versions else 0
        if applied and max(applied) > newest_known:
            raise ConfigError(
                f"database schema v{max(applied)} is newer than this ragchat (v{newest_known})"
            )
        done: list[int] = []
        for migration in ordered:
            if migration.version in applied:
                continue
            log.info("applying schema migration v%d: %s", migration.version, migration.name)
            migration.apply(conn)
            conn.execute(
                schema_migrations.insert().values(
                    version=migration.version, name=migration.name, applied_at=utcnow()
                )
            )
            done.append(migration.version)
        return done


def applied_versions(engine: Engine) -> list[int]:
    with translate_errors(), engine.connect() as conn:
        if not engine.dialect.has_table(conn, schema_migrations.name):
            return []
        query = select(schema_migrations.c.version).order_by(schema_migrations.c.version)
        return list(conn.scalars(query))
