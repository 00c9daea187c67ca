"""Leases on upload jobs and on replies being answered, for ``ragchat serve --workers N`` and
for several servers sharing one database (``api.recovery = "expired"``).

A job runs in the server worker that took the upload (its queue and its ingestion child are
that process's). The single-process server fails jobs left unfinished by a crash at start-up;
with several workers that would fail the live jobs of the others, and a worker that is killed
while the others serve would leave its jobs "running" forever. So each worker renews the lease
(the row's ``updated_at``) of its own unfinished jobs every third of ``api.lease_s``, and
every worker fails the jobs whose lease ran out: their worker is gone. Replies being answered
("streaming" rows) are renewed and expired the same way, as "interrupted"."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from ragchat.api.services._sync import run_sync
from ragchat.store.base import Store

from .chat import ChatService
from .documents import DocumentService

log = logging.getLogger(__name__)

LEASE_JOB_MESSAGE = (
    "interrupted: the server worker running this upload stopped before it finished and "
    "nothing of it was saved; upload the files again to resume (files already in the "
    "knowledge base are skipped)"
)


def renew(documents: DocumentService, store: Store, chat: ChatService | None = None) -> int:
    """The heartbeat of this process's queued and running jobs and of the replies it is
    answering; returns how many rows it renewed."""
    mine = documents.unfinished()
    renewed = store.touch_jobs(mine) if mine else 0
    replies = chat.in_flight() if chat is not None else []
    return renewed + (store.touch_messages(replies) if replies else 0)


def expire(store: Store, lease_s: float) -> list[str]:
    """Fails the jobs and interrupts the replies whose lease ran out (their process died:
    kill -9, out of memory); returns the expired jobs' ids."""
    lease = timedelta(seconds=lease_s)
    expired = store.expire_jobs(lease, LEASE_JOB_MESSAGE, {"interrupted": True})
    if expired:
        log.warning(
            "marked %d upload job(s) interrupted: their server worker stopped renewing them (%s)",
            len(expired),
            ", ".join(expired),
        )
    replies = store.expire_streaming(lease)
    if replies:
        log.warning(
            "marked %d reply(ies) interrupted: the server answering them stopped renewing them",
            replies,
        )
    return expired


async def keep_leases(
    documents: DocumentService, store: Store, lease_s: float, chat: ChatService | None = None
) -> None:
    """Renews this process's leases and expires the dead ones', every ``lease_s / 3`` seconds,
    until cancelled. A failing round (the database briefly away) is logged, not fatal."""
    while True:
        try:
            await run_sync(renew, documents, store, chat)
            await run_sync(expire, store, lease_s)
        except Exception:
            log.exception("leases: this round failed, retrying")
        await asyncio.sleep(lease_s / 3)
