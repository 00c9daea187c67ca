"""The upload job queue: fair between users.

One FIFO executor made every upload wait for the ones before it: a user who sent a
100k-cue transcript held everyone else's two-page upload for minutes. ``FairJobQueue`` keeps
one FIFO per user and ``slots`` worker threads; a user runs at most one job at a time, and a
free slot takes the oldest job of the waiting user served least recently (round-robin). So
with two slots a small upload starts at once beside a big one, and one user's ten uploads
interleave with other users' instead of going first.

It replaces the ``ThreadPoolExecutor`` where jobs were submitted, with the same
``shutdown(wait, cancel_futures)``."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class _Job:
    user: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    seq: int
    future: Future[Any] = field(default_factory=Future)


class FairJobQueue:
    def __init__(self, slots: int = 2, *, name: str = "ragchat-ingest") -> None:
        self.slots = max(1, slots)
        self.name = name
        self._queues: dict[str, deque[_Job]] = {}  # waiting jobs per user
        self._running: set[str] = set()
        self._served: dict[str, int] = {}  # when a waiting or running user last got a slot
        self._seq = 0
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(self, user: str, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Queues ``fn(*args)`` behind ``user``'s earlier jobs; its future has the result."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the job queue is shut down")
            self._seq += 1
            job = _Job(user, fn, args, self._seq)
            self._queues.setdefault(user, deque()).append(job)
            if len(self._threads) < self.slots:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            self._cond.notify()
        return job.future

    def pending(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._queues.values())

    def _next(self) -> _Job | None:
        """The oldest job of the user, among those with a job waiting and none running, who
        got a slot least recently (never first; ties: the older job). None: nothing can
        start now."""
        ready = [u for u, q in self._queues.items() if q and u not in self._running]
        if not ready:
            return None
        user = min(ready, key=lambda u: (self._served.get(u, 0), self._queues[u][0].seq))
        queue = self._queues[user]
        job = queue.popleft()
        if not queue:
            del self._queues[user]
        self._seq += 1
        self._served[user] = self._seq
        self._running.add(user)
        return job

    def _work(self) -> None:
        while True:
            with self._cond:
                job = self._next()
                while job is None:
                    if self._closed:
                        return
                    self._cond.wait()
                    job = self._next()
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        job.future.set_result(job.fn(*job.args))
                    except BaseException as exc:
                        log.exception("upload job failed in the queue")
                        job.future.set_exception(exc)
            finally:
                with self._cond:
                    self._running.discard(job.user)
                    if job.user not in self._queues:  # forget users with nothing left
                        self._served.pop(job.user, None)
                    self._cond.notify_all()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stops taking jobs; ``cancel_futures`` drops the queued ones (running ones finish);
        ``wait`` joins the worker threads."""
        with self._cond:
            self._closed = True
            if cancel_futures:
                for queue in self._queues.values():
                    for job in queue:
                        job.future.cancel()
                self._queues.clear()
            self._cond.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()
