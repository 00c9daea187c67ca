"""The schema as migration v1 created it, frozen: never edit this file.

Migrations replay history, so v1 must create the tables as they were when v1 shipped, not as
``models.py`` describes them today (a later column would then exist before the migration that
adds it, and that migration would fail). Written in SQLAlchemy Core so it stays portable
between SQLite and Postgres; ``DateTime(timezone=True)`` is what ``models.UTCDateTime`` stores."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

_JSON = JSON().with_variant(JSONB(), "postgresql")
_ID = String(36)


def _time(name: str, nullable: bool = False) -> Column[object]:
    return Column(name, DateTime(timezone=True), nullable=nullable)


def _fk(target: str) -> ForeignKey:
    return ForeignKey(target, ondelete="CASCADE")


def v1_metadata() -> MetaData:
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_name)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    Table(
        "users",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("kind", String(16), nullable=False),
        Column("display_name", String(200)),
        _time("created_at"),
        _time("last_seen_at"),
    )
    Table(
        "api_keys",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("user_id", _ID, _fk("users.id"), nullable=False, index=True),
        Column("name", String(200), nullable=False),
        Column("key_hash", String(64), nullable=False, unique=True),
        Column("prefix", String(8), nullable=False),
        _time("created_at"),
        _time("last_used_at", nullable=True),
        _time("revoked_at", nullable=True),
    )
    Table(
        "conversations",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("user_id", _ID, _fk("users.id"), nullable=False),
        Column("title", String(300)),
        Column("assigned_agent", String(100)),
        Column("status", String(16), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        _time("last_activity_at"),
        _time("expires_at", nullable=True),
        Index("ix_conversations_user_updated", "user_id", "updated_at"),
        Index("ix_conversations_status_activity", "status", "last_activity_at"),
    )
    Table(
        "messages",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("conversation_id", _ID, _fk("conversations.id"), nullable=False),
        Column("seq", Integer, nullable=False),
        Column("role", String(16), nullable=False),
        Column("content", Text, nullable=False),
        Column("agent", String(100)),
        Column("citations", _JSON, nullable=False),
        Column("metadata", _JSON, nullable=False),
        Column("status", String(16), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
        Index("ix_messages_status", "status"),
    )
    Table(
        "ingestion_jobs",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("user_id", _ID, _fk("users.id"), nullable=False),
        Column("kb", String(200), nullable=False),
        Column("status", String(16), nullable=False),
        Column("progress", Float, nullable=False),
        Column("total", Integer),
        Column("done", Integer, nullable=False),
        Column("message", Text, nullable=False),
        Column("result", _JSON),
        _time("created_at"),
        _time("updated_at"),
        Index("ix_ingestion_jobs_user_created", "user_id", "created_at"),
    )
    Table(
        "memories",
        metadata,
        Column("id", _ID, primary_key=True),
        Column("user_id", _ID, _fk("users.id"), nullable=False, index=True),
        Column("conversation_id", _ID, _fk("conversations.id"), index=True),
        Column("text", Text, nullable=False),
        Column("embedding", LargeBinary),
        _time("created_at"),
    )
    return metadata


def create_v1(conn: Connection) -> None:
    v1_metadata().create_all(conn)
