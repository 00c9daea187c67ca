"""``SqlStore``: the repository contract over SQLAlchemy (SQLite or Postgres, same code)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, delete, or_, select, text, update
from sqlalchemy.orm import Session

from ragchat.errors import Conflict, NotFound
from ragchat.store._accounts import AccountsMixin
from ragchat.store._core import Clock, SqlCore, new_id, utcnow
from ragchat.store._jobs import JobsMixin
from ragchat.store._kbs import KnowledgeBasesMixin
from ragchat.store._messages import DRAFT, MessagesMixin
from ragchat.store.models import ApiKeyRecord, ConversationRecord, UserRecord
from ragchat.store.rows import ApiKeyRow, ConversationRow, MessageRow, User, UserKind

API_KEY_PREFIX = "rc_"
# ``last_used_at`` is written at most this often per key, so authentication stays a read.
_KEY_TOUCH_INTERVAL = timedelta(minutes=1)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SqlStore(AccountsMixin, MessagesMixin, JobsMixin, KnowledgeBasesMixin, SqlCore):
    """All repositories over one engine. ``session_ttl`` is what ``cleanup`` expires with."""

    def __init__(
        self,
        engine: Engine,
        *,
        session_ttl: timedelta = timedelta(hours=24),
        clock: Clock = utcnow,
    ) -> None:
        super().__init__(engine, clock=clock)
        self.session_ttl = session_ttl

    # -- users ---------------------------------------------------------------------------------
    def ensure_user(
        self,
        user_id: str | None = None,
        *,
        kind: UserKind = "anonymous",
        display_name: str | None = None,
    ) -> User:
        if user_id is not None:  # a new id is new: no read needed
            with self._tx(write=False) as s:
                found = s.get(UserRecord, user_id)
                if found is not None:
                    return User.model_validate(found)
        user_id = user_id or new_id()
        try:
            with self._tx() as s:
                now = self._now()
                record = UserRecord(
                    id=user_id,
                    kind=kind,
                    display_name=display_name,
                    created_at=now,
                    last_seen_at=now,
                )
                s.add(record)
                return User.model_validate(record)
        except Conflict:  # created concurrently by another request
            return self.get_user(user_id)

    def get_user(self, user_id: str) -> User:
        with self._tx(write=False) as s:
            return User.model_validate(_get_user(s, user_id))

    def touch_user(self, user_id: str) -> None:
        with self._tx() as s:
            _get_user(s, user_id).last_seen_at = self._now()

    # -- API keys ------------------------------------------------------------------------------
    def create_api_key(self, user_id: str, name: str) -> tuple[ApiKeyRow, str]:
        secret = API_KEY_PREFIX + secrets.token_urlsafe(32)
        with self._tx() as s:
            _get_user(s, user_id)
            record = ApiKeyRecord(
                id=new_id(),
                user_id=user_id,
                name=name,
                key_hash=hash_secret(secret),
                prefix=secret[:8],
                created_at=self._now(),
                last_used_at=None,
                revoked_at=None,
            )
            s.add(record)
            return ApiKeyRow.model_validate(record), secret

    def user_for_api_key(self, secret: str) -> str | None:
        digest = hash_secret(secret)
        with self._tx(write=False) as s:
            record = s.scalar(select(ApiKeyRecord).where(ApiKeyRecord.key_hash == digest))
            if record is None or record.revoked_at is not None:
                return None
            if not secrets.compare_digest(record.key_hash, digest):
                return None
            user_id, last_used = record.user_id, record.last_used_at
        now = self._now()
        if last_used is None or now - last_used >= _KEY_TOUCH_INTERVAL:
            with self._tx() as s:
                s.execute(
                    update(ApiKeyRecord)
                    .where(ApiKeyRecord.key_hash == digest)
                    .values(last_used_at=now)
                )
        return user_id

    def list_api_keys(self, user_id: str) -> list[ApiKeyRow]:
        with self._tx(write=False) as s:
            rows = s.scalars(
                select(ApiKeyRecord)
                .where(ApiKeyRecord.user_id == user_id)
                .order_by(ApiKeyRecord.created_at, ApiKeyRecord.id)
            )
            return [ApiKeyRow.model_validate(r) for r in rows]

    def revoke_api_key(self, user_id: str, key_id: str) -> None:
        with self._tx() as s:
            record = s.get(ApiKeyRecord, key_id)
            if record is None or record.user_id != user_id:
                raise NotFound("API key not found")
            if record.revoked_at is None:
                record.revoked_at = self._now()

    # -- conversations -------------------------------------------------------------------------
    def create_conversation(
        self, user_id: str, title: str | None = None, conversation_id: str | None = None
    ) -> ConversationRow:
        with self._tx() as s:
            return ConversationRow.model_validate(
                self._new_conversation(s, user_id, title, conversation_id)
            )

    def start_conversation(
        self, user_id: str, content: str
    ) -> tuple[ConversationRow, MessageRow, MessageRow]:
        with self._tx() as s:
            record = self._new_conversation(s, user_id, None, None)
            s.flush()  # the conversation's row before its messages'
            question, reply = self._insert(s, record.id, [("user", content, "complete"), DRAFT])
            return ConversationRow.model_validate(record), question, reply

    def _new_conversation(
        self, s: Session, user_id: str, title: str | None, conversation_id: str | None
    ) -> ConversationRecord:
        _get_user(s, user_id)
        if conversation_id and s.get(ConversationRecord, conversation_id) is not None:
            raise Conflict("conversation id already exists")
        now = self._now()
        record = ConversationRecord(
            id=conversation_id or new_id(),
            user_id=user_id,
            title=title,
            assigned_agent=None,
            user_profile=None,
            status="active",
            created_at=now,
            updated_at=now,
            last_activity_at=now,
            expires_at=None,
            crisis_at=None,
            knowledge_bases=None,
        )
        s.add(record)
        return record

    def get_conversation(self, user_id: str, conversation_id: str) -> ConversationRow:
        with self._tx(write=False) as s:
            return ConversationRow.model_validate(_owned(s, user_id, conversation_id))

    def list_conversations(
        self, user_id: str, limit: int = 50, offset: int = 0
    ) -> list[ConversationRow]:
        C = ConversationRecord
        with self._tx(write=False) as s:
            rows = s.scalars(
                select(C)
                .where(C.user_id == user_id)
                .order_by(C.updated_at.desc(), C.id.desc())
                .limit(limit)
                .offset(offset)
            )
            return [ConversationRow.model_validate(r) for r in rows]

    def rename(self, user_id: str, conversation_id: str, title: str) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            record.title, record.updated_at = title, self._now()
            return ConversationRow.model_validate(record)

    def set_assigned_agent(
        self, user_id: str, conversation_id: str, agent: str | None
    ) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            record.assigned_agent, record.updated_at = agent, self._now()
            return ConversationRow.model_validate(record)

    def set_knowledge_bases(
        self, user_id: str, conversation_id: str, storages: Sequence[str]
    ) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            record.knowledge_bases = list(storages) or None
            record.updated_at = self._now()
            return ConversationRow.model_validate(record)

    def set_user_profile(
        self, user_id: str, conversation_id: str, profile: Mapping[str, Any]
    ) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            record.user_profile, record.updated_at = dict(profile), self._now()
            return ConversationRow.model_validate(record)

    def flag_crisis(self, user_id: str, conversation_id: str) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            if record.crisis_at is None:
                record.crisis_at = record.updated_at = self._now()
            return ConversationRow.model_validate(record)

    def close_conversation(self, user_id: str, conversation_id: str) -> ConversationRow:
        with self._tx() as s:
            record = _owned(s, user_id, conversation_id)
            if record.status != "closed":
                record.status, record.updated_at = "closed", self._now()
            return ConversationRow.model_validate(record)

    def delete_conversation(self, user_id: str, conversation_id: str) -> None:
        with self._tx() as s:
            _owned(s, user_id, conversation_id)
            s.execute(delete(ConversationRecord).where(ConversationRecord.id == conversation_id))

    # -- sessions ------------------------------------------------------------------------------
    def expire_idle(self, now: datetime, ttl: timedelta) -> list[str]:
        C = ConversationRecord
        idle = or_(C.last_activity_at < now - ttl, C.expires_at <= now)
        with self._tx() as s:
            ids = list(s.scalars(select(C.id).where(C.status == "active", idle).order_by(C.id)))
            # One row at a time, keeping those this call closed: another server worker's
            # cleaner may close the same ones at once, and each conversation must be indexed
            # into long-term memory by one of them only.
            return [
                cid
                for cid in ids
                if _changed(
                    s.execute(
                        update(C)
                        .where(C.id == cid, C.status == "active")
                        .values(status="closed", updated_at=now)
                    )
                )
            ]

    def conversation_owners(self, conversation_ids: Sequence[str]) -> dict[str, str]:
        C = ConversationRecord
        ids = list(conversation_ids)
        with self._tx(write=False) as s:
            rows = s.execute(select(C.id, C.user_id).where(C.id.in_(ids))) if ids else ()
            return {str(cid): str(uid) for cid, uid in rows}

    def ping(self) -> None:
        with self._tx(write=False) as s:
            s.execute(text("SELECT 1"))

    def cleanup(self, now: datetime | None = None) -> list[str]:
        return self.expire_idle(now or self._now(), self.session_ttl)


def _get_user(s: Session, user_id: str) -> UserRecord:
    record = s.get(UserRecord, user_id)
    if record is None:
        raise NotFound("user not found")
    return record


def _owned(s: Session, user_id: str, conversation_id: str) -> ConversationRecord:
    record = s.get(ConversationRecord, conversation_id)
    if record is None or record.user_id != user_id:
        raise NotFound("conversation not found")
    return record


def _changed(result: object) -> bool:
    return int(getattr(result, "rowcount", 0) or 0) > 0
