"""The repository contract the API codes against; ``sql.SqlStore`` implements all of it.

Errors: ``NotFound`` (missing *or* owned by another user: one error, so ids leak nothing),
``Conflict`` (the write clashes with stored state), ``StoreUnavailable`` (database down)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from ragchat.store.rows import (
    ApiKeyRow,
    Claimed,
    ConversationChanges,
    ConversationRow,
    JobRow,
    JobStatus,
    KnowledgeBaseRow,
    MemoryRow,
    MessageRow,
    MessageStatus,
    User,
    UserKind,
)
from ragchat.types import Citation, HistoryMessage

CitationLike = Citation | Mapping[str, Any]


class UserRepository(Protocol):
    def ensure_user(
        self,
        user_id: str | None = None,
        *,
        kind: UserKind = "anonymous",
        display_name: str | None = None,
    ) -> User:
        """The user with this id, created if missing (a new uuid when ``user_id`` is None)."""
        ...

    def get_user(self, user_id: str) -> User: ...

    def touch_user(self, user_id: str) -> None:
        """Sets ``last_seen_at`` to now."""
        ...

    def create_api_key(self, user_id: str, name: str) -> tuple[ApiKeyRow, str]:
        """A new key and its secret ("rc_…"), returned once: only its sha256 is stored."""
        ...

    def user_for_api_key(self, secret: str) -> str | None:
        """The owner of a live (not revoked) key, else None."""
        ...

    def list_api_keys(self, user_id: str) -> list[ApiKeyRow]: ...

    def revoke_api_key(self, user_id: str, key_id: str) -> None: ...


class AccountRepository(Protocol):
    """Accounts (a sign-in name and a password hash) and their page sessions; the API hashes
    passwords (argon2) and session tokens (sha256), the store keeps only hashes."""

    def create_account(
        self,
        login: str,
        password_hash: str,
        *,
        display_name: str | None = None,
        user_id: str | None = None,
    ) -> User:
        """A new account, or the identity ``user_id`` made one (keeping what it made);
        ``Conflict`` when the login is taken or that identity cannot become one."""
        ...

    def account_for_login(self, login: str) -> tuple[User, str] | None:
        """(account, password hash), None when no account has this login."""
        ...

    def set_password_hash(self, user_id: str, password_hash: str) -> None: ...

    def list_accounts(self) -> list[User]: ...

    def set_display_name(self, user_id: str, display_name: str) -> User: ...

    def set_preferences(self, user_id: str, preferences: Mapping[str, Any]) -> User:
        """Merged into the stored ones; a None value removes its key."""
        ...

    def claim(self, anonymous_id: str, account_id: str) -> Claimed:
        """Moves what an anonymous identity made to the account and marks it claimed."""
        ...

    def merged_ids(self, account_id: str) -> list[str]:
        """The identities the account claimed."""
        ...

    def start_web_session(self, user_id: str, token_hash: str, expires_at: datetime) -> None: ...

    def web_session_user(self, token_hash: str, idle: timedelta) -> str | None:
        """The user of a live session (renewing it), else None."""
        ...

    def end_web_session(self, token_hash: str) -> None: ...

    def end_web_sessions(self, user_id: str, *, keep: str | None = None) -> int: ...

    def expire_web_sessions(self, idle: timedelta) -> int: ...


class ConversationRepository(Protocol):
    def create_conversation(
        self, user_id: str, title: str | None = None, conversation_id: str | None = None
    ) -> ConversationRow: ...

    def start_conversation(
        self, user_id: str, content: str
    ) -> tuple[ConversationRow, MessageRow, MessageRow]:
        """A new conversation with its first user message and that message's empty
        "streaming" reply, in one transaction (``MessageRepository.begin_turn``'s guarantee,
        and one commit instead of two for the most common turn of a new user)."""
        ...

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationRow: ...

    def list_conversations(
        self, user_id: str, limit: int = 50, offset: int = 0
    ) -> list[ConversationRow]:
        """Newest first (``updated_at``, then id)."""
        ...

    def rename(self, user_id: str, conversation_id: str, title: str) -> ConversationRow: ...

    def set_assigned_agent(
        self, user_id: str, conversation_id: str, agent: str | None
    ) -> ConversationRow: ...

    def set_knowledge_bases(
        self, user_id: str, conversation_id: str, storages: Sequence[str]
    ) -> ConversationRow:
        """Binds the conversation to these knowledge bases (storage names; [] unbinds)."""
        ...

    def set_user_profile(
        self, user_id: str, conversation_id: str, profile: Mapping[str, Any]
    ) -> ConversationRow:
        """Replaces the profile facts the agents keep for this conversation."""
        ...

    def flag_crisis(self, user_id: str, conversation_id: str) -> ConversationRow:
        """Marks the conversation as one where self-harm intent was seen (``crisis_at``, kept
        from the first time); later turns and clients read it from the row."""
        ...

    def close_conversation(self, user_id: str, conversation_id: str) -> ConversationRow: ...

    def delete_conversation(self, user_id: str, conversation_id: str) -> None:
        """Deletes it with its messages and the memories taken from it."""
        ...

    def expire_idle(self, now: datetime, ttl: timedelta) -> list[str]:
        """Closes active conversations idle for longer than ``ttl`` (or past ``expires_at``);
        returns their ids."""
        ...

    def conversation_owners(self, conversation_ids: Sequence[str]) -> dict[str, str]:
        """conversation id → its user's id (for housekeeping: ``expire_idle`` and ``cleanup``
        return bare ids); unknown ids are left out."""
        ...


class MessageRepository(Protocol):
    """Messages of a conversation, in ``seq`` order. Callers check ownership first with
    ``get_conversation``; these take ids the API has already authorised."""

    def add_user_message(self, conversation_id: str, content: str) -> MessageRow:
        """Committed before returning; ``Conflict`` if the conversation is closed."""
        ...

    def begin_assistant_message(self, conversation_id: str, agent: str | None) -> MessageRow:
        """An empty assistant message in status "streaming"."""
        ...

    def begin_turn(self, conversation_id: str, content: str) -> tuple[MessageRow, MessageRow]:
        """The user message and, right after it, its empty "streaming" reply, committed in one
        transaction: a crash never leaves an acknowledged question without its reply row (the
        restart's ``recover_interrupted`` marks it "interrupted"). ``Conflict`` if closed."""
        ...

    def finish_assistant_message(
        self,
        message_id: str,
        content: str,
        citations: Sequence[CitationLike] = (),
        metadata: Mapping[str, Any] | None = None,
        status: MessageStatus = "complete",
        *,
        agent: str | None = None,
        changes: ConversationChanges | None = None,
    ) -> MessageRow:
        """Finalises a "streaming" message (``agent``: the one that answered, if not set at
        the start) and applies ``changes`` to its conversation in the same transaction;
        ``Conflict`` if it is no longer streaming."""
        ...

    def mark_interrupted(
        self, message_id: str, partial_content: str, agent: str | None = None
    ) -> MessageRow: ...

    def recover_interrupted(self) -> int:
        """At startup: every message still "streaming" becomes "interrupted"; returns how many."""
        ...

    def touch_messages(self, message_ids: Sequence[str]) -> int:
        """The answering worker's heartbeat: renews the lease (``updated_at``) of those of
        ``message_ids`` still "streaming"; returns how many."""
        ...

    def expire_streaming(self, lease: timedelta) -> int:
        """Replies still "streaming" whose lease ran out (not renewed for ``lease``: the worker
        answering them died) become "interrupted"; returns how many."""
        ...

    def list_messages(
        self,
        user_id: str,
        conversation_id: str,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[MessageRow]:
        """The last ``limit`` messages before ``before_seq``, oldest first."""
        ...

    def recent_history(
        self, conversation_id: str, n_turns: int, before_seq: int | None = None
    ) -> list[HistoryMessage]:
        """The last ``2 * n_turns`` complete or interrupted, non-empty messages, oldest first."""
        ...


class JobRepository(Protocol):
    def create_job(
        self, user_id: str, kb: str, total: int | None = None, message: str = ""
    ) -> JobRow: ...

    def update_job(
        self,
        job_id: str,
        *,
        status: JobStatus | None = None,
        progress: float | None = None,
        total: int | None = None,
        done: int | None = None,
        message: str | None = None,
        result: Mapping[str, Any] | None = None,
    ) -> JobRow:
        """Worker-side update (no owner check); only the given fields change."""
        ...

    def get_job(self, user_id: str, job_id: str) -> JobRow: ...

    def list_jobs(self, user_id: str, limit: int = 50, offset: int = 0) -> list[JobRow]:
        """Newest first."""
        ...

    def fail_unfinished_jobs(self, message: str) -> int:
        """At startup: every job still "queued" or "running" becomes "failed" with ``message``
        (their worker died with the previous process); returns how many."""
        ...

    def touch_jobs(self, job_ids: Sequence[str]) -> int:
        """The owner's heartbeat: renews the lease (``updated_at``) of those of ``job_ids``
        still "queued" or "running"; returns how many."""
        ...

    def expire_jobs(
        self, lease: timedelta, message: str, result: Mapping[str, Any] | None = None
    ) -> list[str]:
        """Jobs still "queued" or "running" whose lease ran out (no heartbeat nor update for
        ``lease``: the server worker that held them died) become "failed" with ``message`` and
        ``result``; returns their ids. Run by every worker of a many-worker server."""
        ...


class MemoryRepository(Protocol):
    def add_memory(
        self,
        user_id: str,
        text: str,
        conversation_id: str | None = None,
        embedding: bytes | None = None,
    ) -> MemoryRow: ...

    def list_memories(self, user_id: str, limit: int | None = None) -> list[MemoryRow]:
        """Newest first."""
        ...

    def delete_memories(self, user_id: str) -> int:
        """Forgets everything about the user's past conversations; returns how many."""
        ...


class KnowledgeBaseRepository(Protocol):
    """Knowledge bases created over the API (owner, name, description, sharing)."""

    def create_kb(
        self,
        name: str,
        owner_id: str | None,
        *,
        description: str = "",
        default_agent: str | None = None,
        shared: bool = False,
        storage: str | None = None,
    ) -> KnowledgeBaseRow:
        """``Conflict`` when ``name`` (or ``storage``, default ``name``) is any row's name or
        storage."""
        ...

    def list_kbs(self) -> list[KnowledgeBaseRow]: ...

    def find_kb(self, name: str) -> KnowledgeBaseRow | None:
        """By current name, else by storage name."""
        ...

    def kbs_by_storage(self, storages: Sequence[str]) -> dict[str, KnowledgeBaseRow]: ...

    def update_kb(
        self,
        storage: str,
        *,
        name: str | None = None,
        description: str | None = None,
        default_agent: str | None = None,
        clear_default_agent: bool = False,
        shared: bool | None = None,
    ) -> KnowledgeBaseRow: ...

    def delete_kb_row(self, storage: str) -> None: ...


class Store(
    UserRepository,
    AccountRepository,
    ConversationRepository,
    MessageRepository,
    JobRepository,
    MemoryRepository,
    KnowledgeBaseRepository,
    Protocol,
):
    def cleanup(self, now: datetime | None = None) -> list[str]:
        """Periodic housekeeping: ``expire_idle`` with the configured TTL."""
        ...

    def ping(self) -> None:
        """A round trip to the database; ``StoreUnavailable`` when it cannot be reached."""
        ...

    def close(self) -> None: ...


class Refusal(NamedTuple):
    """Why ``RateLimiter.hit`` recorded nothing: the first full key and how long until it has
    room again (seconds, > 0)."""

    key: str
    retry_after: float


class RateLimiter(Protocol):
    """Sliding-window hit budgets per key (the API's answer rate limits). In memory for one
    worker (``api/limits.MemoryRateLimiter``) or in the database (``rate_limits.SqlRateLimiter``)
    so that every worker behind one socket spends the same budget."""

    window: float  # seconds

    def hit(self, limits: Mapping[str, int]) -> Refusal | None:
        """One hit on every key of ``limits`` (key → hits allowed per window; 0 = unlimited,
        never recorded) when all have room, atomically; otherwise nothing is recorded and the
        first full key, in ``limits``' order, is returned."""
        ...
