"""What the store returns: plain frozen dataclasses, detached from any database session."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

UserKind = Literal["anonymous", "named"]
ConversationStatus = Literal["active", "closed"]
MessageRole = Literal["user", "assistant", "system"]
MessageStatus = Literal["complete", "streaming", "interrupted", "failed"]
JobStatus = Literal["queued", "running", "done", "failed"]


@dataclass(frozen=True)
class User:
    id: str
    kind: UserKind
    display_name: str | None
    created_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class ApiKeyRow:
    """An API key without its secret (only its sha256 is stored; ``prefix`` is for display)."""

    id: str
    user_id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class ConversationRow:
    id: str
    user_id: str
    title: str | None
    assigned_agent: str | None
    status: ConversationStatus
    created_at: datetime
    updated_at: datetime
    last_activity_at: datetime
    expires_at: datetime | None
    # When self-harm intent was first seen in the conversation (it stays flagged).
    crisis_at: datetime | None = None

    @property
    def crisis(self) -> bool:
        return self.crisis_at is not None


@dataclass(frozen=True)
class MessageRow:
    id: str
    conversation_id: str
    seq: int
    role: MessageRole
    content: str
    agent: str | None
    status: MessageStatus
    created_at: datetime
    updated_at: datetime
    citations: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JobRow:
    id: str
    user_id: str
    kb: str
    status: JobStatus
    progress: float
    total: int | None
    done: int
    message: str
    result: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class MemoryRow:
    """A long-term memory snippet; ``embedding`` is opaque bytes computed by the caller."""

    id: str
    user_id: str
    conversation_id: str | None
    text: str
    embedding: bytes | None
    created_at: datetime
