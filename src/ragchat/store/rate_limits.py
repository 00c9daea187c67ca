"""Answer rate limits kept in the database, so that every server worker spends one budget.

An exact sliding window: one row per key holding the key's hit times within the window (never
more than its limit). Chosen over a row per hit, whose count-then-insert needs one more lock
statement on Postgres and whose table grows with every request, and over a two-bucket counter,
which is approximate (with the hits bunched at the end of a bucket it admits up to twice the
limit within one window) and would answer differently from the in-memory limiter. A check is
one transaction of two short statements:

1. an upsert of every key, returning its hits: it creates missing rows and locks the existing
   ones (Postgres row locks, taken in key order so two checks never deadlock; SQLite holds its
   database write lock from ``BEGIN IMMEDIATE``), so no other worker reads these keys until
   this check commits: two workers can never both take a key's last slot;
2. only when every key has room, an UPDATE writing the new hit lists. A refused request
   records nothing (the upsert leaves existing hits as they were and creates missing rows
   empty).

Rows whose newest hit has left the window are deleted at most once per window per process, so
the table holds only the keys active in the last window or two."""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Table, case, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ragchat.errors import ConfigError, StoreUnavailable
from ragchat.store._core import SqlCore
from ragchat.store.base import Refusal
from ragchat.store.models import RateLimitRecord

log = logging.getLogger(__name__)

WINDOW_S = 60.0
_KEY_CHARS = 200  # the column's width; longer keys are stored as their digest
_TABLE: Table = RateLimitRecord.__table__  # type: ignore[assignment]  # a Table, typed FromClause


class SqlRateLimiter:
    """``RateLimiter`` over the store's database (SQLite or Postgres). ``clock`` is wall-clock
    time (epoch seconds): every worker must read the same clock."""

    def __init__(
        self,
        store: SqlCore,
        *,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        dialect = store.engine.dialect.name
        if dialect not in ("sqlite", "postgresql"):
            raise ConfigError(f"database rate limits need SQLite or PostgreSQL, not {dialect}")
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        upsert = insert(_TABLE)
        # Creates missing rows, locks all of them, returns (key, hits) of each. Run with one
        # parameter set per key (one multi-row statement, compiled once and cached).
        self._lock_rows = upsert.on_conflict_do_update(
            index_elements=[_TABLE.c.key], set_={"hits": _TABLE.c.hits}
        ).returning(_TABLE.c.key, _TABLE.c.hits)
        # The store's own transactions: on SQLite this process's writers queue on one lock.
        self._store = store
        self.window = window
        self._clock = clock
        self._next_prune = float("-inf")
        self._prune_lock = threading.Lock()

    def hit(self, limits: Mapping[str, int]) -> Refusal | None:
        wanted = {_row_key(key): (key, limit) for key, limit in limits.items() if limit > 0}
        if not wanted:
            return None
        now = self._clock()
        refusal = self._hit(wanted, now)
        self._maybe_prune(now)
        return refusal

    def _hit(self, wanted: Mapping[str, tuple[str, int]], now: float) -> Refusal | None:
        cutoff = now - self.window
        with self._store._tx() as s:
            rows = s.execute(self._lock_rows, [_new_row(key, now) for key in sorted(wanted)])
            kept = {key: sorted(t for t in _parse(hits) if t > cutoff) for key, hits in rows}
            for row_key, (key, limit) in wanted.items():
                times = kept[row_key]
                if len(times) >= limit:  # room again when the limit-th newest hit expires
                    return Refusal(key, max(0.001, times[-limit] + self.window - now))
            new_hits = {
                row_key: _format([*kept[row_key], now][-limit:])
                for row_key, (_, limit) in wanted.items()
            }
            s.execute(
                update(_TABLE)
                .where(_TABLE.c.key.in_(list(new_hits)))
                .values(hits=case(new_hits, value=_TABLE.c.key), last_at=now)
            )
        return None

    def _maybe_prune(self, now: float) -> None:
        with self._prune_lock:
            if now < self._next_prune:
                return
            self._next_prune = now + self.window
        try:
            self.prune(now)
        except StoreUnavailable as exc:  # the check itself succeeded; try again next window
            log.warning("could not prune rate-limit rows: %s", exc)

    def prune(self, now: float | None = None) -> int:
        """Deletes the keys with no hit in the window ending at ``now``; returns how many."""
        now = self._clock() if now is None else now
        # Postgres: rows a check holds are skipped, not waited for (a check locks keys in key
        # order, a DELETE in any order: waiting could deadlock). SQLite ignores FOR UPDATE.
        idle = (
            select(_TABLE.c.key)
            .where(_TABLE.c.last_at <= now - self.window)
            .with_for_update(skip_locked=True)
        )
        with self._store._tx() as s:
            result = s.execute(delete(_TABLE).where(_TABLE.c.key.in_(idle)))
            return int(getattr(result, "rowcount", 0) or 0)

    def keys(self) -> int:
        """How many keys are stored (what pruning keeps bounded)."""
        with self._store._tx(write=False) as s:
            return int(s.scalar(select(func.count()).select_from(_TABLE)) or 0)


def _row_key(key: str) -> str:
    if len(key) <= _KEY_CHARS:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def _new_row(key: str, now: float) -> dict[str, Any]:
    return {"key": key, "hits": "", "last_at": now}


def _parse(hits: str) -> list[float]:
    return [float(t) for t in hits.split()]


def _format(times: Sequence[float]) -> str:
    return " ".join(repr(t) for t in times)
