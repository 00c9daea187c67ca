"""Per-check cost of the answer rate limiter on each backend: this process's memory, the
database on SQLite (a file, WAL) and on Postgres (``--postgres-url``, e.g. the one
``scripts/postgres start`` prints). One thread, as one request's check runs.

Each check is what the API does per answer: one hit on ``user:<id>`` and one on ``ip:<addr>``
together (``RateLimits.check``). "allowed": 200 users behind 50 addresses, limits high enough
that every check is recorded (both statements of the database check). "refused": one user
whose budget is spent (the database check's first statement only). "SELECT 1": the floor, one
read transaction doing nothing (``store.ping``).

Example::

    .venv/bin/python benchmarks/bench_rate_limit.py --checks 2000 \\
        --postgres-url "$(scripts/postgres url)"
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_line, pct, print_table, timed

from ragchat.api.limits import MemoryRateLimiter
from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store
from ragchat.store.base import RateLimiter
from ragchat.store.database import scratch_schema
from ragchat.store.rate_limits import SqlRateLimiter


def measure(limiter: RateLimiter, checks: int) -> tuple[list[float], list[float]]:
    """Seconds per allowed check and per refused check."""
    allowed: list[float] = []
    for n in range(checks):
        limits = {f"user:u{n % 200}": 1_000_000, f"ip:10.0.0.{n % 50}": 1_000_000}
        t0 = time.perf_counter()
        refusal = limiter.hit(limits)
        allowed.append(time.perf_counter() - t0)
        assert refusal is None
    full = {"user:spent": 1, "ip:10.0.1.1": 1_000_000}
    assert limiter.hit(full) is None
    refused: list[float] = []
    for _ in range(checks):
        t0 = time.perf_counter()
        refusal = limiter.hit(full)
        refused.append(time.perf_counter() - t0)
        assert refusal is not None
    return allowed, refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--postgres-url", default="", help="omit to skip Postgres")
    args = parser.parse_args()
    print(machine_line())
    rows: list[list[object]] = []

    def report(name: str, limiter: RateLimiter, store: SqlStore | None = None) -> None:
        limiter.hit({"user:warm-up": 10, "ip:warm-up": 10})  # connections, statement caches
        allowed, refused = measure(limiter, args.checks)
        timings = [("allowed", allowed), ("refused", refused)]
        if store is not None:  # the floor: one read transaction of SELECT 1
            timings.append(("SELECT 1", [timed(store.ping)[0] for _ in range(args.checks)]))
        for path, seconds in timings:
            us = [s * 1e6 for s in seconds]
            rows.append([name, path, len(us), pct(us, 50), pct(us, 95)])

    report("memory", MemoryRateLimiter())
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-rl-") as tmp:
        store = build_store(Settings(data_dir=Path(tmp)))  # SQLite under data_dir
        try:
            report("database: SQLite", SqlRateLimiter(store), store)
        finally:
            store.close()
        if args.postgres_url:
            with scratch_schema(args.postgres_url, "bench") as url:
                store = build_store(Settings(data_dir=Path(tmp), database_url=url))
                try:
                    report("database: PostgreSQL", SqlRateLimiter(store), store)
                finally:
                    store.close()
    print_table(["backend", "check", "n", "p50 µs", "p95 µs"], rows, digits=1)


if __name__ == "__main__":
    main()
