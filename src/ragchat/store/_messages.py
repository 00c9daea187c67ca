"""Messages: strictly ordered per conversation by ``seq``; the database is the only record."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ragchat.crashpoints import crashpoint
from ragchat.errors import Conflict, NotFound, StoreUnavailable
from ragchat.store._core import SqlCore, new_id
from ragchat.store.models import ConversationRecord, MessageRecord
from ragchat.store.rows import ConversationChanges, MessageRole, MessageRow, MessageStatus
from ragchat.types import Citation, HistoryMessage

# Concurrent appends to one conversation may pick the same seq; the loser retries.
SEQ_RETRIES = 20
_HISTORY_STATUSES = ("complete", "interrupted")
# A reply row before its first token: "streaming", empty, its agent set when it settles.
DRAFT: tuple[MessageRole, str, MessageStatus] = ("assistant", "", "streaming")


class _SeqTaken(Exception):
    """Another transaction committed the seq this one picked."""


class MessagesMixin(SqlCore):
    def add_user_message(self, conversation_id: str, content: str) -> MessageRow:
        return self._append(conversation_id, [("user", content, "complete")])[0]

    def begin_assistant_message(self, conversation_id: str, agent: str | None) -> MessageRow:
        return self._append(conversation_id, [("assistant", "", "streaming")], agent)[0]

    def begin_turn(self, conversation_id: str, content: str) -> tuple[MessageRow, MessageRow]:
        rows = self._append(conversation_id, [("user", content, "complete"), DRAFT])
        return rows[0], rows[1]

    def finish_assistant_message(
        self,
        message_id: str,
        content: str,
        citations: Sequence[Citation | Mapping[str, Any]] = (),
        metadata: Mapping[str, Any] | None = None,
        status: MessageStatus = "complete",
        *,
        agent: str | None = None,
        changes: ConversationChanges | None = None,
    ) -> MessageRow:
        if status == "streaming":
            raise ValueError("a finished message cannot be 'streaming'")
        cites = [c.to_dict() if isinstance(c, Citation) else dict(c) for c in citations]
        return self._finish(
            message_id, content, status, cites, dict(metadata or {}), agent, changes
        )

    def mark_interrupted(
        self, message_id: str, partial_content: str, agent: str | None = None
    ) -> MessageRow:
        return self._finish(message_id, partial_content, "interrupted", None, None, agent, None)

    def recover_interrupted(self) -> int:
        with self._tx() as s:
            result = s.execute(
                update(MessageRecord)
                .where(MessageRecord.status == "streaming")
                .values(status="interrupted", updated_at=self._now())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def touch_messages(self, message_ids: Sequence[str]) -> int:
        if not message_ids:
            return 0
        with self._tx() as s:
            result = s.execute(
                update(MessageRecord)
                .where(MessageRecord.id.in_(list(message_ids)))
                .where(MessageRecord.status == "streaming")
                .values(updated_at=self._now())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def expire_streaming(self, lease: timedelta) -> int:
        with self._tx() as s:
            now = self._now()
            result = s.execute(
                update(MessageRecord)
                .where(MessageRecord.status == "streaming")
                .where(MessageRecord.updated_at < now - lease)
                .values(status="interrupted", updated_at=now)
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def list_messages(
        self,
        user_id: str,
        conversation_id: str,
        limit: int = 100,
        before_seq: int | None = None,
    ) -> list[MessageRow]:
        M = MessageRecord
        with self._tx(write=False) as s:
            conv = s.get(ConversationRecord, conversation_id)
            if conv is None or conv.user_id != user_id:
                raise NotFound("conversation not found")
            query = select(M).where(M.conversation_id == conversation_id)
            if before_seq is not None:
                query = query.where(M.seq < before_seq)
            rows = list(s.scalars(query.order_by(M.seq.desc()).limit(limit)))
            return [MessageRow.model_validate(r) for r in reversed(rows)]

    def recent_history(
        self, conversation_id: str, n_turns: int, before_seq: int | None = None
    ) -> list[HistoryMessage]:
        if n_turns <= 0:
            return []
        M = MessageRecord
        query = select(M.role, M.content, M.agent).where(
            M.conversation_id == conversation_id,
            M.status.in_(_HISTORY_STATUSES),
            M.content != "",
        )
        if before_seq is not None:
            query = query.where(M.seq < before_seq)
        with self._tx(write=False) as s:
            rows = list(s.execute(query.order_by(M.seq.desc()).limit(2 * n_turns)))
        return [
            HistoryMessage(role=cast(MessageRole, role), content=content, agent=agent)
            for role, content, agent in reversed(rows)
        ]

    # -- internals -----------------------------------------------------------------------------
    def _append(
        self,
        conversation_id: str,
        messages: Sequence[tuple[MessageRole, str, MessageStatus]],
        agent: str | None = None,
    ) -> list[MessageRow]:
        """``messages`` with consecutive seqs, in one transaction."""
        for attempt in range(SEQ_RETRIES):
            try:
                with self._tx() as s:
                    return self._insert(s, conversation_id, messages, agent)
            except _SeqTaken:
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise StoreUnavailable(f"could not append to conversation after {SEQ_RETRIES} tries")

    def _insert(
        self,
        s: Session,
        conversation_id: str,
        messages: Sequence[tuple[MessageRole, str, MessageStatus]],
        agent: str | None = None,
    ) -> list[MessageRow]:
        # The row lock queues appends to one conversation on Postgres (SQLite: BEGIN IMMEDIATE);
        # UNIQUE(conversation_id, seq) and the retry in ``_append`` remain the safety net.
        conv = s.get(ConversationRecord, conversation_id, with_for_update=True)
        if conv is None:
            raise NotFound("conversation not found")
        if any(role == "user" for role, _, _ in messages) and conv.status != "active":
            raise Conflict("conversation is closed")
        seq = self._next_seq(s, conv.id)
        now = self._now()
        records = [
            MessageRecord(
                id=new_id(),
                conversation_id=conv.id,
                seq=seq + i,
                role=role,
                content=content,
                agent=agent,
                citations=[],
                metadata_={},
                status=status,
                created_at=now,
                updated_at=now,
            )
            for i, (role, content, status) in enumerate(messages)
        ]
        s.add_all(records)
        try:
            s.flush()
        except sa_exc.IntegrityError as exc:
            raise _SeqTaken() from exc
        conv.updated_at = conv.last_activity_at = now
        return [MessageRow.model_validate(r) for r in records]

    def _next_seq(self, s: Session, conversation_id: str) -> int:
        M = MessageRecord
        query = select(func.coalesce(func.max(M.seq), 0) + 1)
        return int(s.scalar(query.where(M.conversation_id == conversation_id)) or 1)

    def _finish(
        self,
        message_id: str,
        content: str,
        status: MessageStatus,
        citations: list[dict[str, Any]] | None,
        metadata: dict[str, Any] | None,
        agent: str | None,
        changes: ConversationChanges | None,
    ) -> MessageRow:
        with self._tx() as s:
            record = s.get(MessageRecord, message_id)
            if record is None:
                raise NotFound("message not found")
            if record.status != "streaming":
                raise Conflict(f"message is already {record.status}")
            now = self._now()
            record.content, record.status, record.updated_at = content, status, now
            if agent is not None:
                record.agent = agent
            if citations is not None:
                record.citations = citations
            if metadata is not None:
                record.metadata_ = metadata
            conv = s.get(ConversationRecord, record.conversation_id)
            if conv is not None:
                conv.updated_at = conv.last_activity_at = now
                if changes is not None:
                    _apply(conv, changes, now)
            s.flush()
            crashpoint("store.reply_uncommitted")  # written, not yet committed
            return MessageRow.model_validate(record)


def _apply(conv: ConversationRecord, changes: ConversationChanges, now: datetime) -> None:
    conv.assigned_agent = changes.assigned_agent
    if changes.user_profile is not None:
        conv.user_profile = dict(changes.user_profile)
    if changes.crisis and conv.crisis_at is None:
        conv.crisis_at = now
