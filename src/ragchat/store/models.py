"""The current schema as typed SQLAlchemy ORM classes (portable between SQLite and Postgres).

Only ``migrations.py`` creates or alters tables (a new column here needs a new migration
there); the repository code reads and writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite keeps no zone: naive means UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use datetime.now(UTC)")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


JsonType = JSON().with_variant(JSONB(), "postgresql")
ID = String(36)


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_name)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


class UserRecord(Base):
    __tablename__ = "users"
    __table_args__ = (
        Index("ix_users_login", "login", unique=True),
        Index("ix_users_merged_into", "merged_into"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    display_name: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Schema v6, accounts: the sign-in name as compared (casefolded), the argon2 hash of the
    # password; None for cookie and API-key identities.
    login: Mapped[str | None] = mapped_column(String(64))
    password_hash: Mapped[str | None] = mapped_column(String(255))
    # What the page remembers for the person on any browser (the last "Answer from" choice).
    preferences: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    # An anonymous identity claimed by an account at sign-in: its uploads are the account's.
    merged_into: Mapped[str | None] = mapped_column(String(36))


class ApiKeyRecord(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ConversationRecord(Base):
    __tablename__ = "conversations"
    __table_args__ = (
        Index("ix_conversations_user_updated", "user_id", "updated_at"),
        Index("ix_conversations_status_activity", "status", "last_activity_at"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str | None] = mapped_column(String(300))
    assigned_agent: Mapped[str | None] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_activity_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # v2: the profile facts the companion keeps between turns (None before anything is learnt).
    user_profile: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    # When the safety stage first saw self-harm intent here (schema v3); None: never.
    crisis_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The knowledge bases (storage names) the conversation is bound to (schema v5); None: none,
    # the configured agents answer from their own.
    knowledge_bases: Mapped[list[str] | None] = mapped_column(JsonType)


class MessageRecord(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
        Index("ix_messages_status", "status"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text)
    agent: Mapped[str | None] = mapped_column(String(100))
    citations: Mapped[list[dict[str, Any]]] = mapped_column(JsonType)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JsonType)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class IngestionJobRecord(Base):
    __tablename__ = "ingestion_jobs"
    __table_args__ = (Index("ix_ingestion_jobs_user_created", "user_id", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kb: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    progress: Mapped[float] = mapped_column(Float)
    total: Mapped[int | None] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer)
    message: Mapped[str] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class KnowledgeBaseRecord(Base):
    """A knowledge base a user created over the API (schema v5). Knowledge bases without a row
    (the configured samples, ``ragchat ingest``) are shared. ``storage`` is where its indexes
    live and never changes; ``name`` is what people call it and changes on rename;
    ``name_key`` (v6) is the name casefolded, unique: "Sailing" and "sailing" are one name."""

    __tablename__ = "knowledge_bases"
    __table_args__ = (Index("ix_knowledge_bases_name_key", "name_key", unique=True),)

    storage: Mapped[str] = mapped_column(String(200), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    owner_id: Mapped[str | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    description: Mapped[str] = mapped_column(Text)
    default_agent: Mapped[str | None] = mapped_column(String(100))
    shared: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    name_key: Mapped[str | None] = mapped_column(String(200))


class WebSessionRecord(Base):
    """A signed-in page session (schema v6): the cookie holds a random token, the row only its
    sha256, so a copy of the database signs nobody in. Ends at ``expires_at`` (absolute), when
    idle past the configured time (``last_seen_at``), or at sign-out."""

    __tablename__ = "web_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class MemoryRecord(Base):
    __tablename__ = "memories"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RateLimitRecord(Base):
    """One answer-rate-limit key (``user:<id>``, ``ip:<address>``) and its hits in the current
    window (schema v4; see ``rate_limits.py``)."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    # Hit times (epoch seconds, ``repr`` of a float) separated by spaces, oldest first.
    hits: Mapped[str] = mapped_column(Text)
    # The newest hit (or the row's creation): rows idle for a window are pruned by this.
    last_at: Mapped[float] = mapped_column(Float, index=True)
