"""Abuse limits kept in process memory (the server runs one worker): a sliding-window rate
limiter for the answer endpoints and a cap on concurrently open streams."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable

from ragchat.api.errors import ApiError

WINDOW_S = 60.0
STREAM_RETRY_AFTER_S = 5
_MAX_KEYS = 100_000  # forget idle keys beyond this many, so memory stays bounded


class SlidingWindowLimiter:
    """At most ``limit`` hits per key within the last ``window`` seconds (0 = unlimited).

    ``hit`` records a request and returns 0, or returns the seconds until the oldest hit in the
    window expires (the Retry-After) without recording it; ``record=False`` only asks."""

    def __init__(
        self,
        limit: int,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, *, record: bool = True) -> float:
        if self.limit <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            hits = self._hits.get(key)
            if hits is None:
                if len(self._hits) >= _MAX_KEYS:
                    self._prune(now)
                hits = self._hits[key] = deque()
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) >= self.limit:
                return max(0.001, hits[0] + self.window - now)
            if record:
                hits.append(now)
            return 0.0

    def _prune(self, now: float) -> None:
        for key in [k for k, h in self._hits.items() if not h or h[-1] <= now - self.window]:
            del self._hits[key]


class RateLimits:
    """Per-user and per-IP limits on the answer endpoints; both must allow a request."""

    def __init__(self, per_user: int, per_ip: int, clock: Callable[[], float] = time.monotonic):
        self.users = SlidingWindowLimiter(per_user, clock=clock)
        self.ips = SlidingWindowLimiter(per_ip, clock=clock)

    def check(self, user_id: str, ip: str) -> None:
        """Raises 429 with Retry-After (whole seconds, rounded up) when a limit is reached."""
        user_key, ip_key = f"user:{user_id}", f"ip:{ip}"
        wait = self.users.hit(user_key, record=False)
        if wait:
            raise _too_many("user", wait)
        wait = self.ips.hit(ip_key, record=False)
        if wait:
            raise _too_many("IP address", wait)
        # Recorded only when both allow it, so a refused request costs neither budget.
        self.users.hit(user_key)
        self.ips.hit(ip_key)


def _too_many(scope: str, wait: float) -> ApiError:
    seconds = max(1, math.ceil(wait))
    return ApiError(
        429,
        "rate_limited",
        f"Too many requests for this {scope}; retry in {seconds} s.",
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
