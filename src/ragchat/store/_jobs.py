"""Ingestion jobs and long-term memory snippets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update

from ragchat.errors import NotFound
from ragchat.store._core import SqlCore, new_id
from ragchat.store.models import IngestionJobRecord, MemoryRecord
from ragchat.store.rows import JobRow, JobStatus, MemoryRow

_UNFINISHED: tuple[JobStatus, ...] = ("queued", "running")


class JobsMixin(SqlCore):
    # -- ingestion jobs ------------------------------------------------------------------------
    def create_job(
        self, user_id: str, kb: str, total: int | None = None, message: str = ""
    ) -> JobRow:
        with self._tx() as s:
            now = self._now()
            record = IngestionJobRecord(
                id=new_id(),
                user_id=user_id,
                kb=kb,
                status="queued",
                progress=0.0,
                total=total,
                done=0,
                message=message,
                result=None,
                created_at=now,
                updated_at=now,
            )
            s.add(record)
            return JobRow.model_validate(record)

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
        with self._tx() as s:
            record = s.get(IngestionJobRecord, job_id)
            if record is None:
                raise NotFound("job not found")
            if status is not None:
                record.status = status
            if progress is not None:
                record.progress = min(1.0, max(0.0, float(progress)))
            if total is not None:
                record.total = total
            if done is not None:
                record.done = done
            if message is not None:
                record.message = message
            if result is not None:
                record.result = dict(result)
            record.updated_at = self._now()
            return JobRow.model_validate(record)

    def get_job(self, user_id: str, job_id: str) -> JobRow:
        with self._tx(write=False) as s:
            record = s.get(IngestionJobRecord, job_id)
            if record is None or record.user_id != user_id:
                raise NotFound("job not found")
            return JobRow.model_validate(record)

    def list_jobs(self, user_id: str, limit: int = 50, offset: int = 0) -> list[JobRow]:
        J = IngestionJobRecord
        with self._tx(write=False) as s:
            rows = s.scalars(
                select(J)
                .where(J.user_id == user_id)
                .order_by(J.created_at.desc(), J.id.desc())
                .limit(limit)
                .offset(offset)
            )
            return [JobRow.model_validate(r) for r in rows]

    def fail_unfinished_jobs(self, message: str) -> int:
        J = IngestionJobRecord
        with self._tx() as s:
            result = s.execute(
                update(J)
                .where(J.status.in_(_UNFINISHED))
                .values(status="failed", message=message, updated_at=self._now())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def touch_jobs(self, job_ids: Sequence[str]) -> int:
        J = IngestionJobRecord
        if not job_ids:
            return 0
        with self._tx() as s:
            result = s.execute(
                update(J)
                .where(J.id.in_(list(job_ids)), J.status.in_(_UNFINISHED))
                .values(updated_at=self._now())
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def expire_jobs(
        self, lease: timedelta, message: str, result: Mapping[str, Any] | None = None
    ) -> list[str]:
        J = IngestionJobRecord
        with self._tx() as s:
            cutoff = self._now() - lease
            found = list(
                s.scalars(select(J.id).where(J.status.in_(_UNFINISHED), J.updated_at < cutoff))
            )
            expired = []
            for job_id in found:  # one at a time: another worker may be expiring them too
                done = s.execute(  # the cutoff again: a heartbeat meanwhile keeps its job
                    update(J)
                    .where(J.id == job_id, J.status.in_(_UNFINISHED), J.updated_at < cutoff)
                    .values(
                        status="failed",
                        message=message,
                        result=dict(result) if result is not None else None,
                        updated_at=self._now(),
                    )
                )
                if int(getattr(done, "rowcount", 0) or 0):
                    expired.append(job_id)
            return expired

    # -- long-term memory ----------------------------------------------------------------------
    def add_memory(
        self,
        user_id: str,
        text: str,
        conversation_id: str | None = None,
        embedding: bytes | None = None,
    ) -> MemoryRow:
        with self._tx() as s:
            record = MemoryRecord(
                id=new_id(),
                user_id=user_id,
                conversation_id=conversation_id,
                text=text,
                embedding=embedding,
                created_at=self._now(),
            )
            s.add(record)
            return MemoryRow.model_validate(record)

    def list_memories(self, user_id: str, limit: int | None = None) -> list[MemoryRow]:
        M = MemoryRecord
        query = select(M).where(M.user_id == user_id).order_by(M.created_at.desc(), M.id.desc())
        with self._tx(write=False) as s:
            return [MemoryRow.model_validate(r) for r in s.scalars(query.limit(limit))]

    def delete_memories(self, user_id: str) -> int:
        with self._tx() as s:
            result = s.execute(delete(MemoryRecord).where(MemoryRecord.user_id == user_id))
            return int(getattr(result, "rowcount", 0) or 0)
