"""Abuse limits: a sliding-window rate limit on the answer endpoints and a cap on concurrently
open streams. The rate limit's hits live in this process's memory (one worker) or in the
database (``store/rate_limits.py``: every worker behind one socket spends the same budget);
``api.rate_limit_store`` picks one."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from ragchat.api.errors import ApiError
from ragchat.errors import StoreUnavailable
from ragchat.store.base import RateLimiter, Refusal

log = logging.getLogger(__name__)

WINDOW_S = 60.0
STREAM_RETRY_AFTER_S = 5


class MemoryRateLimiter:
    """``RateLimiter`` in this process's memory: exact sliding windows (a deque of hit times
    per key). Keys idle for a whole window are forgotten at most once per window, so memory
    holds only the keys active in the last window or two."""

    def __init__(self, window: float = WINDOW_S, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._next_prune = float("-inf")

    def hit(self, limits: Mapping[str, int]) -> Refusal | None:
        wanted = {key: limit for key, limit in limits.items() if limit > 0}
        if not wanted:
            return None
        now = self.clock()
        with self._lock:
            if now >= self._next_prune:
                self._prune(now)
            for key, limit in wanted.items():
                hits = self._hits.get(key)
                if hits is None:
                    continue
                while hits and hits[0] <= now - self.window:
                    hits.popleft()
                if len(hits) >= limit:  # room again when the limit-th newest hit expires
                    return Refusal(key, max(0.001, hits[-limit] + self.window - now))
            for key, limit in wanted.items():
                hits = self._hits.setdefault(key, deque())
                hits.append(now)
                while len(hits) > limit:  # older hits can no longer refuse anything
                    hits.popleft()
            return None

    def prune(self, now: float | None = None) -> int:
        """Forgets the keys with no hit in the window ending at ``now``; returns how many."""
        with self._lock:
            return self._prune(self.clock() if now is None else now)

    def _prune(self, now: float) -> int:
        self._next_prune = now + self.window
        idle = [k for k, h in self._hits.items() if not h or h[-1] <= now - self.window]
        for key in idle:
            del self._hits[key]
        return len(idle)

    def keys(self) -> int:
        """How many keys are held (what pruning keeps bounded)."""
        with self._lock:
            return len(self._hits)


class FailoverRateLimiter:
    """``primary`` (the database), or this worker's own memory while the database cannot be
    reached. Fail-open to per-worker limits, not fail-closed: refusing every answer because
    the limiter's table is unreachable (or SQLite stayed locked past its busy timeout) would
    turn a bookkeeping hiccup into an outage of the whole API, and the answers that need the
    database fail with their own 503 anyway. Meanwhile each worker still enforces the limit
    itself, so a client gets at most N x the limit from N workers, never unlimited."""

    def __init__(self, primary: RateLimiter, fallback: RateLimiter) -> None:
        self.primary = primary
        self.fallback = fallback
        self.window = primary.window
        self._warned_at = float("-inf")

    def hit(self, limits: Mapping[str, int]) -> Refusal | None:
        try:
            return self.primary.hit(limits)
        except StoreUnavailable as exc:
            now = time.monotonic()
            if now - self._warned_at >= self.window:  # one warning per window, not per request
                self._warned_at = now
                log.warning("rate limits fall back to this worker's memory: %s", exc)
            return self.fallback.hit(limits)


class RateLimits:
    """Per-user and per-IP limits on the answer endpoints; both must allow a request, and a
    refused request costs neither budget. Beside them, with budgets of their own: new
    identities per IP (a cookie-less request or ``POST /users``: each is a user row, and a
    client dropping its cookie would otherwise get a fresh per-user budget for free) and
    uploads per user and per IP."""

    def __init__(
        self,
        per_user: int,
        per_ip: int,
        limiter: RateLimiter | None = None,
        *,
        new_users_per_ip: int | None = None,
        uploads_per_user: int | None = None,
        uploads_per_ip: int | None = None,
    ) -> None:
        self.per_user = per_user
        self.per_ip = per_ip
        self.limiter = limiter if limiter is not None else MemoryRateLimiter()
        self.new_users_per_ip = per_ip if new_users_per_ip is None else new_users_per_ip
        self.uploads_per_user = per_user if uploads_per_user is None else uploads_per_user
        self.uploads_per_ip = (
            3 * self.uploads_per_user if uploads_per_ip is None else uploads_per_ip
        )

    def check_new_user(self, ip: str) -> None:
        """429 when this address made too many identities in the window."""
        refusal = self.limiter.hit({f"new-user:ip:{ip}": self.new_users_per_ip})
        if refusal is not None:
            raise _too_many("IP address", refusal.retry_after, "new identities")

    def check_sign_in(self, login: str, ip: str, per_name: int) -> None:
        """429 past ``per_name`` sign-in attempts on one name a minute, or 4x that from one
        address (password guessing, against one account or many)."""
        name_key = f"sign-in:name:{login}"
        refusal = self.limiter.hit({name_key: per_name, f"sign-in:ip:{ip}": 4 * per_name})
        if refusal is not None:
            scope = "sign-in name" if refusal.key == name_key else "IP address"
            raise _too_many(scope, refusal.retry_after, "sign-in attempts")

    def check_upload(self, user_id: str, ip: str) -> None:
        user_key = f"upload:user:{user_id}"
        refusal = self.limiter.hit(
            {user_key: self.uploads_per_user, f"upload:ip:{ip}": self.uploads_per_ip}
        )
        if refusal is not None:
            scope = "user" if refusal.key == user_key else "IP address"
            raise _too_many(scope, refusal.retry_after, "uploads")

    def check(self, user_id: str, ip: str) -> None:
        """Raises 429 with Retry-After (whole seconds, rounded up) when a limit is reached.
        Blocks on the database with a database limiter: call it from a worker thread."""
        user_key = f"user:{user_id}"
        refusal = self.limiter.hit({user_key: self.per_user, f"ip:{ip}": self.per_ip})
        if refusal is not None:
            scope = "user" if refusal.key == user_key else "IP address"
            raise _too_many(scope, refusal.retry_after)


def _too_many(scope: str, wait: float, what: str = "requests") -> ApiError:
    seconds = max(1, math.ceil(wait))
    return ApiError(
        429,
        "rate_limited",
        f"Too many {what} for this {scope}; retry in {seconds} s.",
        {"Retry-After": str(seconds)},
    )


class StreamSlots:
    """A non-blocking cap on open streams: ``acquire`` fails fast with 503 + Retry-After rather
    than queueing, so a client knows to come back instead of waiting on a hung socket."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            if self.open >= self.limit:
                raise ApiError(
                    503,
                    "too_many_streams",
                    f"The server is answering {self.limit} streams already; retry shortly.",
                    {"Retry-After": str(STREAM_RETRY_AFTER_S)},
                )
            self.open += 1

    def release(self) -> None:
        with self._lock:
            self.open = max(0, self.open - 1)
