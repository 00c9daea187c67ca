"""What the store returns: one frozen pydantic model per entity, read straight from the ORM
record (``from_attributes``) and detached from any database session. The API's response models
read these the same way, so no entity is copied field by field anywhere."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

UserKind = Literal["anonymous", "named", "account"]
ConversationStatus = Literal["active", "closed"]
MessageRole = Literal["user", "assistant", "system"]
MessageStatus = Literal["complete", "streaming", "interrupted", "failed"]
JobStatus = Literal["queued", "running", "done", "failed"]


class Row(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True, populate_by_name=True)


class User(Row):
    """``kind``: "anonymous" (a cookie), "named" (made by ``POST /users``, usually with an API
    key), "account" (signs in with ``login`` and a password; schema v6)."""

    id: str
    kind: UserKind
    display_name: str | None
    created_at: datetime
    last_seen_at: datetime
    login: str | None = None
    preferences: dict[str, Any] = {}
    merged_into: str | None = None  # claimed by this account at sign-in

    @field_validator("preferences", mode="before")
    @classmethod
    def _no_preferences(cls, value: Any) -> Any:
        return {} if value is None else value


class ApiKeyRow(Row):
    """An API key without its secret (only its sha256 is stored; ``prefix`` is for display)."""

    id: str
    user_id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ConversationRow(Row):
    """``assigned_agent`` and ``user_profile`` are what the agents keep between turns (the
    conversation's agent, the profile facts the companion learnt); the caller persists them."""

    id: str
    user_id: str
    title: str | None
    assigned_agent: str | None
    user_profile: dict[str, Any] = {}
    status: ConversationStatus
    created_at: datetime
    updated_at: datetime
    last_activity_at: datetime
    expires_at: datetime | None
    # When self-harm intent was first seen in the conversation (it stays flagged).
    crisis_at: datetime | None = None
    # The knowledge bases (storage names) the conversation is bound to; [] for none.
    knowledge_bases: list[str] = []

    @property
    def crisis(self) -> bool:
        return self.crisis_at is not None

    @field_validator("user_profile", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value  # rows from before the column existed

    @field_validator("knowledge_bases", mode="before")
    @classmethod
    def _none_is_no_list(cls, value: Any) -> Any:
        return [] if value is None else value


class MessageRow(Row):
    id: str
    conversation_id: str
    seq: int
    role: MessageRole
    content: str
    agent: str | None
    status: MessageStatus
    created_at: datetime
    updated_at: datetime
    citations: list[dict[str, Any]] = []
    # The ORM attribute is ``metadata_`` (SQLAlchemy reserves ``metadata``).
    metadata: dict[str, Any] = Field(
        default_factory=dict, validation_alias=AliasChoices("metadata_", "metadata")
    )

    @field_validator("citations", "metadata", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any, info: Any) -> Any:
        if value is None:
            return [] if info.field_name == "citations" else {}
        return value


class ConversationChanges(Row):
    """What a turn decided about its conversation, stored with its reply in one transaction
    (so a crash never keeps the reply and loses the agent, or the other way round).
    ``user_profile`` None: unchanged; ``crisis``: flag it (a flag is never cleared)."""

    assigned_agent: str | None
    user_profile: dict[str, Any] | None = None
    crisis: bool = False


class Claimed(Row):
    """What an account took over from an anonymous identity at sign-in."""

    conversations: int = 0
    knowledge_bases: int = 0
    api_keys: int = 0


class KnowledgeBaseRow(Row):
    """A knowledge base created over the API: ``storage`` names its indexes (fixed at
    creation), ``name`` is what its users call it (changes on rename). ``owner_id`` None: the
    owner's account is gone (only an operator can reach it)."""

    storage: str
    name: str
    owner_id: str | None
    description: str
    default_agent: str | None
    shared: bool
    created_at: datetime
    updated_at: datetime


class JobRow(Row):
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


class MemoryRow(Row):
    """A long-term memory snippet; ``embedding`` is opaque bytes computed by the caller."""

    id: str
    user_id: str
    conversation_id: str | None
    text: str
    embedding: bytes | None

    created_at: datetime

    @field_validator("embedding", mode="before")
    @classmethod
    def _bytes(cls, value: Any) -> Any:
        return bytes(value) if isinstance(value, memoryview | bytearray) else value
