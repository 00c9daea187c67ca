"""Upload-job leases, for ``ragchat serve --workers N``.

A job runs in the server worker that took the upload (its queue and its ingestion child are
that process's). The single-process server fails jobs left unfinished by a crash at start-up;
with several workers that would fail the live jobs of the others, and a worker that is killed
while the others serve would leave its jobs "running" forever. So each worker renews the lease
(the row's ``updated_at``) of its own unfinished jobs every third of ``api.job_lease_s``, and
every worker fails the jobs whose lease ran out: their worker is gone."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from ragchat.api.services._sync import run_sync
from ragchat.store.base import Store

from .documents import DocumentService

log = logging.getLogger(__name__)

LEASE_JOB_MESSAGE = (
    "interrupted: the server worker running this upload stopped before it finished and "
    "nothing of it was saved; upload the files again to resume (files already in the "
    "knowledge base are skipped)"
)


def renew(documents: DocumentService, store: Store) -> int:
    """The heartbeat of this process's queued and running jobs."""
    mine = documents.unfinished()
    return store.touch_jobs(mine) if mine else 0


def expire(store: Store, lease_s: float) -> list[str]:
    """Fails the jobs whose lease ran out (their worker died: kill -9, out of memory)."""
    expired = store.expire_jobs(
        timedelta(seconds=lease_s), LEASE_JOB_MESSAGE, {"interrupted": True}
    )
    if expired:
        log.warning(
            "marked %d upload job(s) interrupted: their server worker stopped renewing them (%s)",
            len(expired),
            ", ".join(expired),
        )
    return expired


async def keep_leases(documents: DocumentService, store: Store, lease_s: float) -> None:
    """Renews this worker's leases and expires the dead ones', every ``lease_s / 3`` seconds,
    until cancelled. A failing round (the database briefly away) is logged, not fatal."""
    while True:
        try:
            await run_sync(renew, documents, store)
            await run_sync(expire, store, lease_s)
        except Exception:
            log.exception("upload job leases: this round failed, retrying")
        await asyncio.sleep(lease_s / 3)
