"""Accounts and their page sessions (schema v6): a user with a sign-in name and a password hash,
the sessions a browser signs in with, and the claim of an anonymous identity's data at sign-in.

The store never sees a password or a session token: the API hashes both (argon2 for passwords,
sha256 for random tokens) and hands over the hashes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update

from ragchat.errors import Conflict, NotFound
from ragchat.store._core import SqlCore, new_id
from ragchat.store.models import (
    ApiKeyRecord,
    ConversationRecord,
    IngestionJobRecord,
    KnowledgeBaseRecord,
    MemoryRecord,
    UserRecord,
    WebSessionRecord,
)
from ragchat.store.rows import Claimed, User

# ``last_seen_at`` of a session is written at most this often, so a request stays a read.
_SESSION_TOUCH_INTERVAL = timedelta(minutes=1)


class AccountsMixin(SqlCore):
    # -- accounts ------------------------------------------------------------------------------
    def create_account(
        self,
        login: str,
        password_hash: str,
        *,
        display_name: str | None = None,
        user_id: str | None = None,
    ) -> User:
        """A new account, or (``user_id``) that anonymous identity made an account, keeping
        everything it made. ``Conflict`` when ``login`` is taken or ``user_id`` cannot become
        one (already an account, or claimed by one)."""
        with self._tx() as s:
            if s.scalar(select(UserRecord.id).where(UserRecord.login == login)) is not None:
                raise Conflict("that sign-in name is taken")
            now = self._now()
            record = s.get(UserRecord, user_id) if user_id else None
            if record is not None:
                if record.kind == "account" or record.merged_into is not None:
                    raise Conflict("this identity cannot become an account")
                record.kind = "account"
            else:
                record = UserRecord(id=user_id or new_id(), kind="account", created_at=now)
                s.add(record)
            record.login = login
            record.password_hash = password_hash
            record.display_name = display_name or record.display_name or login
            record.last_seen_at = now
            s.flush()
            return User.model_validate(record)

    def account_for_login(self, login: str) -> tuple[User, str] | None:
        """The account and its password hash, None when no account has that name."""
        with self._tx(write=False) as s:
            record = s.scalar(
                select(UserRecord).where(UserRecord.login == login, UserRecord.kind == "account")
            )
            if record is None or not record.password_hash:
                return None
            return User.model_validate(record), record.password_hash

    def set_password_hash(self, user_id: str, password_hash: str) -> None:
        with self._tx() as s:
            record = s.get(UserRecord, user_id)
            if record is None or record.kind != "account":
                raise NotFound("account not found")
            record.password_hash = password_hash

    def list_accounts(self) -> list[User]:
        with self._tx(write=False) as s:
            rows = s.scalars(
                select(UserRecord).where(UserRecord.kind == "account").order_by(UserRecord.login)
            )
            return [User.model_validate(r) for r in rows]

    def set_display_name(self, user_id: str, display_name: str) -> User:
        with self._tx() as s:
            record = s.get(UserRecord, user_id)
            if record is None:
                raise NotFound("user not found")
            record.display_name = display_name
            return User.model_validate(record)

    def set_preferences(self, user_id: str, preferences: Mapping[str, Any]) -> User:
        """Merges ``preferences`` into the user's (a None value removes that key)."""
        with self._tx() as s:
            record = s.get(UserRecord, user_id)
            if record is None:
                raise NotFound("user not found")
            merged = dict(record.preferences or {})
            for key, value in preferences.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            record.preferences = merged
            return User.model_validate(record)

    # -- claiming an anonymous identity --------------------------------------------------------
    def claim(self, anonymous_id: str, account_id: str) -> Claimed:
        """Moves what the identity ``anonymous_id`` made to the account: conversations (with
        their messages), knowledge bases, upload jobs, memories, API keys; its uploaded files
        stay where they are and count as the account's (``merged_ids``). The identity is
        marked claimed, so its cookie no longer signs anybody in. Nothing for an identity
        that is an account, already claimed, or the account itself."""
        with self._tx() as s:
            source = s.get(UserRecord, anonymous_id)
            target = s.get(UserRecord, account_id)
            if (
                source is None
                or target is None
                or anonymous_id == account_id
                or source.kind == "account"
                or source.merged_into is not None
            ):
                return Claimed()
            moved: dict[str, int] = {}
            for name, column in (
                ("conversations", ConversationRecord.user_id),
                ("knowledge_bases", KnowledgeBaseRecord.owner_id),
                ("api_keys", ApiKeyRecord.user_id),
                ("jobs", IngestionJobRecord.user_id),
                ("memories", MemoryRecord.user_id),
            ):
                result = s.execute(
                    update(column.class_).where(column == anonymous_id).values({column: account_id})
                )
                moved[name] = int(getattr(result, "rowcount", 0) or 0)
            source.merged_into = account_id
            if source.preferences and not target.preferences:
                target.preferences = dict(source.preferences)
            return Claimed(
                conversations=moved["conversations"],
                knowledge_bases=moved["knowledge_bases"],
                api_keys=moved["api_keys"],
            )

    def merged_ids(self, account_id: str) -> list[str]:
        """The identities this account claimed (their uploaded files are the account's)."""
        with self._tx(write=False) as s:
            return list(
                s.scalars(
                    select(UserRecord.id)
                    .where(UserRecord.merged_into == account_id)
                    .order_by(UserRecord.id)
                )
            )

    # -- page sessions -------------------------------------------------------------------------
    def start_web_session(self, user_id: str, token_hash: str, expires_at: datetime) -> None:
        with self._tx() as s:
            if s.get(UserRecord, user_id) is None:
                raise NotFound("user not found")
            now = self._now()
            s.add(
                WebSessionRecord(
                    token_hash=token_hash,
                    user_id=user_id,
                    created_at=now,
                    last_seen_at=now,
                    expires_at=expires_at,
                )
            )

    def web_session_user(self, token_hash: str, idle: timedelta) -> str | None:
        """The user of a live session (not past ``expires_at``, used within ``idle``); renews
        its ``last_seen_at``. None for an unknown, ended or expired session."""
        now = self._now()
        with self._tx(write=False) as s:
            record = s.get(WebSessionRecord, token_hash)
            if record is None or record.expires_at <= now or record.last_seen_at + idle <= now:
                return None
            user_id, last_seen = record.user_id, record.last_seen_at
        if now - last_seen >= _SESSION_TOUCH_INTERVAL:
            with self._tx() as s:
                s.execute(
                    update(WebSessionRecord)
                    .where(WebSessionRecord.token_hash == token_hash)
                    .values(last_seen_at=now)
                )
        return user_id

    def end_web_session(self, token_hash: str) -> None:
        with self._tx() as s:
            s.execute(delete(WebSessionRecord).where(WebSessionRecord.token_hash == token_hash))

    def end_web_sessions(self, user_id: str, *, keep: str | None = None) -> int:
        """Ends every session of the user (but ``keep``), e.g. after a password change."""
        query = delete(WebSessionRecord).where(WebSessionRecord.user_id == user_id)
        if keep is not None:
            query = query.where(WebSessionRecord.token_hash != keep)
        with self._tx() as s:
            return int(getattr(s.execute(query), "rowcount", 0) or 0)

    def expire_web_sessions(self, idle: timedelta) -> int:
        """Deletes sessions past their end or idle for ``idle``; returns how many."""
        now = self._now()
        with self._tx() as s:
            result = s.execute(
                delete(WebSessionRecord).where(
                    (WebSessionRecord.expires_at <= now)
                    | (WebSessionRecord.last_seen_at <= now - idle)
                )
            )
            return int(getattr(result, "rowcount", 0) or 0)
