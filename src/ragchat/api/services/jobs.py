"""The upload job queue: fair between users and between client addresses.

One FIFO executor made every upload wait for the ones before it: a user who sent a
100k-cue transcript held everyone else's two-page upload for minutes. ``FairJobQueue`` keeps
one FIFO per user and ``slots`` worker threads; a user runs at most one job at a time, and a
free slot takes the oldest job of the waiting user served least recently (round-robin). So
with two slots a small upload starts at once beside a big one, and one user's ten uploads
interleave with other users' instead of going first.

Identities are free to make, so fairness per user alone let one client with two fresh
identities hold both slots (two crafted PDFs held every other upload for two minutes). Each
job also carries its client address: an address runs at most ``per_address`` jobs at once
(default half the slots, at least one), and addresses take turns before users do.

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
    address: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    seq: int
    future: Future[Any] = field(default_factory=Future)


class FairJobQueue:
    def __init__(
        self, slots: int = 2, *, per_address: int | None = None, name: str = "ragchat-ingest"
    ) -> None:
        self.slots = max(1, slots)
        self.per_address = max(1, per_address if per_address else self.slots // 2)
        self.name = name
        self._queues: dict[str, deque[_Job]] = {}  # waiting jobs per user
        self._running: set[str] = set()
        self._served: dict[str, int] = {}  # when a waiting or running user last got a slot
        self._address_running: dict[str, int] = {}  # jobs running per client address
        self._address_served: dict[str, int] = {}  # when an address last got a slot
        self._seq = 0
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def submit(
        self, user: str, fn: Callable[..., Any], *args: Any, address: str | None = None
    ) -> Future[Any]:
        """Queues ``fn(*args)`` behind ``user``'s earlier jobs; its future has the result.
        ``address``: the client's; None = the user is an address of its own."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the job queue is shut down")
            self._seq += 1
            job = _Job(user, f"user:{user}" if address is None else address, fn, args, self._seq)
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
        """The oldest job of the user, among those with a job waiting, none running and an
        address under its share, whose address then who got a slot least recently (never
        first; ties: the older job). None: nothing can start now."""
        ready = [
            u
            for u, q in self._queues.items()
            if q
            and u not in self._running
            and self._address_running.get(q[0].address, 0) < self.per_address
        ]
        if not ready:
            return None

        def turn(u: str) -> tuple[int, int, int]:
            head = self._queues[u][0]
            return (self._address_served.get(head.address, 0), self._served.get(u, 0), head.seq)

        user = min(ready, key=turn)
        queue = self._queues[user]
        job = queue.popleft()
        if not queue:
            del self._queues[user]
        self._seq += 1
        self._served[user] = self._seq
        self._address_served[job.address] = self._seq
        self._address_running[job.address] = self._address_running.get(job.address, 0) + 1
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
                    left = self._address_running.get(job.address, 1) - 1
                    if left > 0:
                        self._address_running[job.address] = left
                    else:
                        self._address_running.pop(job.address, None)
                        waiting = any(
                            j.address == job.address for q in self._queues.values() for j in q
                        )
                        if not waiting:  # forget addresses with nothing left
                            self._address_served.pop(job.address, None)
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
