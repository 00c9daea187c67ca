"""Ordered, recorded schema migrations (no Alembic).

``schema_migrations`` records each applied version. ``migrate`` applies the pending ones in
version order, all in one transaction (serialised across processes: an advisory lock on
Postgres, ``BEGIN IMMEDIATE`` on SQLite), so running it at every startup is idempotent.

To change the schema, change ``models.py`` and append a ``Migration`` with the next version whose
``apply`` issues that change (portable DDL: SQLAlchemy constructs, or one statement per dialect).
Migrations are history and are never edited: v1 is the frozen schema of ``schema_v1.py``, not
``models.py`` (tests/store/test_migrations.py checks that replaying them all gives models.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    cast,
    select,
    text,
    update,
)

from ragchat.errors import ConfigError
from ragchat.store._core import utcnow
from ragchat.store.database import translate_errors, write_engine
from ragchat.store.models import JsonType, UTCDateTime
from ragchat.store.schema_v1 import create_v1

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


def _v2_conversation_profile(conn: Connection) -> None:
    """``conversations.user_profile``, filled from where it used to live: the metadata of the
    conversation's latest assistant message that carried one."""
    column_type = JsonType.compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE conversations ADD COLUMN user_profile {column_type}"))
    meta = MetaData()
    messages = Table(
        "messages",
        meta,
        Column("conversation_id", String(36)),
        Column("seq", Integer),
        Column("role", String(16)),
        Column("metadata", JsonType),
    )
    conversations = Table(
        "conversations", meta, Column("id", String(36)), Column("user_profile", JsonType)
    )
    query = (
        select(messages.c.conversation_id, messages.c.metadata)
        .where(
            messages.c.role == "assistant",
            cast(messages.c.metadata, Text).like('%"user_profile"%'),
        )
        .order_by(messages.c.conversation_id, messages.c.seq)
    )
    latest: dict[str, dict[str, object]] = {}
    for conversation_id, metadata in conn.execute(query):
        profile = metadata.get("user_profile") if isinstance(metadata, dict) else None
        if isinstance(profile, dict):
            latest[conversation_id] = profile
    for conversation_id, profile in latest.items():
        conn.execute(
            update(conversations)
            .where(conversations.c.id == conversation_id)
            .values(user_profile=profile)
        )


def _v3_conversation_crisis(conn: Connection) -> None:
    """``conversations.crisis_at``: when self-harm intent was first seen (None: never)."""
    column_type = UTCDateTime().compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE conversations ADD COLUMN crisis_at {column_type}"))


def _v4_rate_limits(conn: Connection) -> None:
    """``rate_limits``: answer rate-limit hits shared by every server worker."""
    meta = MetaData(
        naming_convention={"ix": "ix_%(table_name)s_%(column_0_name)s", "pk": "pk_%(table_name)s"}
    )
    Table(
        "rate_limits",
        meta,
        Column("key", String(200), primary_key=True),
        Column("hits", Text, nullable=False),
        Column("last_at", Float, nullable=False, index=True),
    ).create(conn)


def _v5_knowledge_bases(conn: Connection) -> None:
    """``knowledge_bases``: the ones users create over the API (owner, description, sharing);
    ``conversations.knowledge_bases``: what a conversation is bound to."""
    column_type = JsonType.compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE conversations ADD COLUMN knowledge_bases {column_type}"))
    meta = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_name)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    Table("users", meta, Column("id", String(36), primary_key=True))
    Table(
        "knowledge_bases",
        meta,
        Column("storage", String(200), primary_key=True),
        Column("name", String(200), nullable=False, unique=True),
        Column("owner_id", String(36), ForeignKey("users.id", ondelete="SET NULL"), index=True),
        Column("description", Text, nullable=False),
        Column("default_agent", String(100)),
        Column("shared", Boolean, nullable=False),
        Column("created_at", UTCDateTime(), nullable=False),
        Column("updated_at", UTCDateTime(), nullable=False),
    ).create(conn)


def _v6_accounts(conn: Connection) -> None:
    """Accounts (``users.login``, ``password_hash``, ``preferences``, ``merged_into``), page
    sessions (``web_sessions``), and knowledge-base names unique without regard to case
    (``knowledge_bases.name_key``): of names that differ only in case, the oldest keeps its
    name and the others get a suffix ("Sailing-2"), so nothing is lost."""
    json_type = JsonType.compile(dialect=conn.dialect)
    for ddl in (
        "ALTER TABLE users ADD COLUMN login VARCHAR(64)",
        "ALTER TABLE users ADD COLUMN password_hash VARCHAR(255)",
        f"ALTER TABLE users ADD COLUMN preferences {json_type}",
        "ALTER TABLE users ADD COLUMN merged_into VARCHAR(36)",
        "CREATE UNIQUE INDEX ix_users_login ON users (login)",
        "CREATE INDEX ix_users_merged_into ON users (merged_into)",
        "ALTER TABLE knowledge_bases ADD COLUMN name_key VARCHAR(200)",
    ):
        conn.execute(text(ddl))
    kbs = Table(
        "knowledge_bases",
        MetaData(),
        Column("storage", String(200)),
        Column("name", String(200)),
        Column("name_key", String(200)),
        Column("created_at", UTCDateTime()),
    )
    taken: set[str] = set()
    rows = conn.execute(select(kbs.c.storage, kbs.c.name).order_by(kbs.c.created_at, kbs.c.name))
    for storage, name in list(rows):
        new, n = name, 1
        while new.casefold() in taken:
            n += 1
            new = f"{name}-{n}"
        taken.add(new.casefold())
        conn.execute(
            update(kbs).where(kbs.c.storage == storage).values(name=new, name_key=new.casefold())
        )
    conn.execute(
        text("CREATE UNIQUE INDEX ix_knowledge_bases_name_key ON knowledge_bases (name_key)")
    )
    meta = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    Table("users", meta, Column("id", String(36), primary_key=True))
    Table(
        "web_sessions",
        meta,
        Column("token_hash", String(64), primary_key=True),
        Column(
            "user_id",
            String(36),
            ForeignKey("users.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        Column("created_at", UTCDateTime(), nullable=False),
        Column("last_seen_at", UTCDateTime(), nullable=False),
        Column("expires_at", UTCDateTime(), nullable=False, index=True),
    ).create(conn)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema", create_v1),
    Migration(2, "conversation user profile", _v2_conversation_profile),
    Migration(3, "conversation crisis flag", _v3_conversation_crisis),
    Migration(4, "rate limits", _v4_rate_limits),
    Migration(5, "knowledge bases", _v5_knowledge_bases),
    Migration(6, "accounts, page sessions, case-blind knowledge-base names", _v6_accounts),
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
