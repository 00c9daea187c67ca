"""The ``RateLimiter`` contract, passed by every backend: this process's memory, and the
database on SQLite and on Postgres (``RAGCHAT_TEST_DATABASE_URL``). Plus the race that
matters with several server workers: one slot left, many callers at once, exactly one wins."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest
from sqlalchemy import text

from ragchat.api.limits import MemoryRateLimiter
from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store
from ragchat.store.base import RateLimiter, Refusal
from ragchat.store.rate_limits import SqlRateLimiter

from .conftest import fresh_database

USER, IP = "user:ann", "ip:203.0.113.7"


class FakeTime:
    """Epoch seconds that move only when told to."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Limiter(RateLimiter, Protocol):
    def keys(self) -> int: ...

    def prune(self, now: float | None = None) -> int: ...


class Backend:
    """Opens limiters on one backend; all of them share its hits (like server workers)."""

    def __init__(
        self, kind: str, open_: Callable[[FakeTime], Limiter], stores: list[SqlStore]
    ) -> None:
        self.kind = kind
        self.open = open_
        self.stores = stores  # the database backends' stores, one per limiter opened


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.integration, id="postgres"),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        shared: dict[int, MemoryRateLimiter] = {}

        def memory(time: FakeTime) -> Limiter:  # one process: one limiter per clock
            return shared.setdefault(id(time), MemoryRateLimiter(clock=time))

        yield Backend("memory", memory, [])
        return
    stores: list[SqlStore] = []
    with fresh_database(request.param, tmp_path) as url:
        settings = Settings(data_dir=tmp_path / "data", database_url=url)

        def database(time: FakeTime) -> Limiter:
            stores.append(build_store(settings))  # its own engine: another worker's connections
            return SqlRateLimiter(stores[-1], clock=time)

        try:
            yield Backend(request.param, database, stores)
        finally:
            for store in stores:
                store.close()


@pytest.fixture
def time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def limiter(backend: Backend, time: FakeTime) -> Limiter:
    return backend.open(time)


def test_the_limit_is_reached_and_retry_after_says_when_a_slot_frees(
    limiter: Limiter, time: FakeTime
) -> None:
    assert limiter.hit({USER: 2}) is None
    time.now += 10
    assert limiter.hit({USER: 2}) is None
    time.now += 10
    assert limiter.hit({USER: 2}) == Refusal(USER, 40.0)  # the first hit leaves at +60
    time.now += 39.5
    assert limiter.hit({USER: 2}) == Refusal(USER, 0.5)


def test_the_window_slides(limiter: Limiter, time: FakeTime) -> None:
    start = time.now
    for step in (0, 10, 20):
        time.now = start + step
        assert limiter.hit({USER: 3}) is None
    time.now = start + 60  # the hit at 0 has left the window, the others have not
    assert limiter.hit({USER: 3}) is None
    assert limiter.hit({USER: 3}) == Refusal(USER, 10.0)
    time.now = start + 200  # all gone
    for _ in range(3):
        assert limiter.hit({USER: 3}) is None
    assert limiter.hit({USER: 3}) == Refusal(USER, 60.0)


def test_a_refused_request_costs_no_budget(limiter: Limiter, time: FakeTime) -> None:
    limits = {USER: 1, IP: 2}
    assert limiter.hit(limits) is None
    for _ in range(5):  # refused by the user limit: the IP's budget is untouched
        assert limiter.hit(limits) == Refusal(USER, 60.0)
    assert limiter.hit({"user:bob": 1, IP: 2}) is None  # the IP's second and last hit
    refused = limiter.hit({"user:cy": 1, IP: 2})
    assert refused == Refusal(IP, 60.0)
    time.now += 60  # the window is empty again
    # cy's refusal (by the IP) cost cy nothing either: one hit is still allowed, then none.
    assert limiter.hit({"user:cy": 1, "ip:other": 2}) is None
    assert limiter.hit({"user:cy": 1, "ip:other": 2}) == Refusal("user:cy", 60.0)


def test_users_and_addresses_have_their_own_budgets(limiter: Limiter) -> None:
    assert limiter.hit({USER: 1, IP: 3}) is None
    assert limiter.hit({"user:bob": 1, "ip:198.51.100.9": 3}) is None  # nobody shares
    assert limiter.hit({"user:cy": 1, IP: 3}) is None  # same address, another user
    refused = limiter.hit({USER: 1, "ip:198.51.100.9": 3})  # ann moved: her user budget
    assert refused is not None and refused.key == USER
    # When both are full the first key given is named (the API reports the user).
    assert limiter.hit({"user:cy": 1, IP: 2}) == Refusal("user:cy", 60.0)
    assert limiter.hit({IP: 2, "user:cy": 1}) == Refusal(IP, 60.0)


def test_zero_means_unlimited_and_records_nothing(limiter: Limiter) -> None:
    for _ in range(50):
        assert limiter.hit({USER: 0, IP: 0}) is None
    assert limiter.keys() == 0
    assert limiter.hit({USER: 0, IP: 1}) is None
    assert limiter.hit({USER: 0, IP: 1}) == Refusal(IP, 60.0)


def test_idle_keys_are_pruned(limiter: Limiter, time: FakeTime) -> None:
    for n in range(20):
        assert limiter.hit({f"user:{n}": 5, f"ip:10.0.0.{n}": 5}) is None
    assert limiter.keys() == 40
    time.now += 30
    assert limiter.hit({USER: 5}) is None
    assert limiter.keys() == 41  # nothing idle for a window yet
    time.now += 61
    assert limiter.hit({"user:late": 5}) is None
    assert limiter.keys() == 1  # only the key just hit: ann's hit is 61 s old
    assert limiter.hit({USER: 1}) is None  # a pruned key starts afresh


def test_pruning_skips_rows_a_check_holds_instead_of_waiting(
    backend: Backend, time: FakeTime
) -> None:
    """On Postgres a check locks its keys in key order and a DELETE would lock in any order:
    waiting could deadlock, so pruning leaves a held row for next time."""
    if backend.kind != "postgres":
        pytest.skip("row locks: Postgres only")
    limiter = backend.open(time)
    assert limiter.hit({USER: 5, IP: 5}) is None
    time.now += 61
    engine = backend.stores[0].engine
    with engine.connect() as holder, holder.begin():
        holder.execute(text("SELECT key FROM rate_limits WHERE key = :k FOR UPDATE"), {"k": USER})
        pruned: list[int] = []
        pruner = threading.Thread(target=lambda: pruned.append(limiter.prune()), daemon=True)
        pruner.start()
        pruner.join(timeout=30)
        assert pruned == [1]  # the IP's row; ann's is held
    assert limiter.keys() == 1
    assert limiter.prune() == 1


def test_long_keys_are_limited_like_short_ones(limiter: Limiter) -> None:
    long_key = "ip:" + "f" * 400  # longer than the database column: stored as a digest
    assert limiter.hit({long_key: 1}) is None
    assert limiter.hit({long_key: 1}) == Refusal(long_key, 60.0)
    assert limiter.hit({long_key[:-1] + "e": 1}) is None


def test_workers_share_one_budget(backend: Backend, time: FakeTime) -> None:
    first, second = backend.open(time), backend.open(time)
    assert first.hit({USER: 2}) is None
    assert second.hit({USER: 2}) is None
    assert first.hit({USER: 2}) == Refusal(USER, 60.0)
    assert second.hit({USER: 2}) == Refusal(USER, 60.0)


@pytest.mark.parametrize("earlier_hits", [0, 2], ids=["new-key", "existing-key"])
def test_only_one_of_many_racing_workers_takes_the_last_slot(
    backend: Backend, time: FakeTime, earlier_hits: int
) -> None:
    """Eight workers (own connections, so own transactions) ask at once for a key with one
    slot left, round after round: every round exactly one is allowed."""
    workers = [backend.open(time) for _ in range(8)]
    limit = earlier_hits + 1
    for round_ in range(15):
        key = f"user:race-{round_}"
        for _ in range(earlier_hits):
            assert workers[0].hit({key: limit}) is None
        results = _race(workers, {key: limit})
        assert sum(r is None for r in results) == 1, f"round {round_}: {results}"


def _race(workers: list[Limiter], limits: dict[str, int]) -> list[Refusal | None]:
    """Each worker's ``hit(limits)``, all released at once from their own threads."""
    start = threading.Barrier(len(workers))
    results: list[Refusal | None] = []
    errors: list[BaseException] = []

    def race(worker: Limiter) -> None:
        start.wait()
        try:
            results.append(worker.hit(limits))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=race, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return results
