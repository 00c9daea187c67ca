"""Rate limits (429 + Retry-After), body size limits (413), the stream cap and CORS."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragchat.api.errors import ApiError
from ragchat.api.limits import FailoverRateLimiter, MemoryRateLimiter, RateLimits
from ragchat.errors import StoreUnavailable
from ragchat.settings import Settings
from ragchat.store import SqlStore, build_store
from ragchat.store.base import RateLimiter, Refusal

from .conftest import AppFactory
from .fakes import FakeEngine


def test_answer_endpoints_are_rate_limited_per_user_and_ip(make_app: AppFactory) -> None:
    client = make_app(rate_limit_per_minute=2, rate_limit_per_ip_per_minute=3)
    assert client.post("/chat", json={"message": "one"}).status_code == 200
    assert client.post("/query", json={"question": "two?"}).status_code != 429
    limited = client.post("/chat", json={"message": "three"})
    assert limited.status_code == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert limited.json()["error"]["type"] == "rate_limited"
    assert "user" in limited.json()["error"]["message"]
    # Reading is not limited.
    assert client.get("/conversations").status_code == 200
    # Another user from the same IP has its own user budget but shares the IP's.
    other = TestClient(client.app)
    assert other.post("/chat", json={"message": "four"}).status_code == 200
    blocked = other.post(
        "/v1/chat/completions",
        json={"model": "ragchat", "messages": [{"role": "user", "content": "x"}]},
    )
    assert blocked.status_code == 429 and "IP" in blocked.json()["error"]["message"]


@pytest.fixture
def two_stores(tmp_path: Path) -> Iterator[list[SqlStore]]:
    """Two workers' stores on one database (closed after the apps using them stop)."""
    url = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    stores = [build_store(Settings(data_dir=tmp_path / f"w{n}", database_url=url)) for n in (1, 2)]
    yield stores
    for store in stores:
        store.close()


def test_a_database_limit_is_shared_by_two_apps_on_one_database(
    two_stores: list[SqlStore], make_app: AppFactory
) -> None:
    """Two workers (here two apps) over one database spend one budget per user and per IP;
    with memory limits each would allow the whole limit."""
    stores = two_stores
    limits = {"rate_limit_per_minute": 100, "rate_limit_per_ip_per_minute": 3, "workers": 2}
    first, second = (make_app(store=store, **limits) for store in stores)
    assert isinstance(_limiter(first), FailoverRateLimiter)  # auto: database with 2 workers
    answers = [c.post("/query", json={"question": "q?"}).status_code for c in (first, second)]
    answers.append(first.post("/query", json={"question": "q?"}).status_code)
    assert 429 not in answers
    refused = second.post("/query", json={"question": "q?"})
    assert refused.status_code == 429 and "IP" in refused.json()["error"]["message"]


def _limiter(client: TestClient) -> RateLimiter:
    state = client.app.state.ragchat  # type: ignore[attr-defined]
    limiter: RateLimiter = state.limits.limiter
    return limiter


@pytest.mark.parametrize(
    ("store", "workers", "expected"),
    [
        ("auto", 1, MemoryRateLimiter),
        ("auto", 4, FailoverRateLimiter),
        ("memory", 4, MemoryRateLimiter),
        ("database", 1, FailoverRateLimiter),
    ],
)
def test_the_rate_limit_store_setting_picks_the_backend(
    make_app: AppFactory, store: str, workers: int, expected: type
) -> None:
    client = make_app(rate_limit_store=store, workers=workers)
    assert type(_limiter(client)) is expected


def test_retry_after_is_whole_seconds_rounded_up_and_names_the_scope() -> None:
    now = [0.0]
    limits = RateLimits(1, 2, MemoryRateLimiter(clock=lambda: now[0]))
    limits.check("ann", "10.0.0.1")
    now[0] = 58.5
    with pytest.raises(ApiError) as user:
        limits.check("ann", "10.0.0.1")
    assert user.value.status == 429 and user.value.headers == {"Retry-After": "2"}
    assert "user" in user.value.message
    limits.check("bob", "10.0.0.1")
    now[0] = 59.999
    with pytest.raises(ApiError) as ip:
        limits.check("cy", "10.0.0.1")
    assert ip.value.headers == {"Retry-After": "1"} and "IP address" in ip.value.message


class _Down:
    window = 60.0

    def hit(self, limits: Mapping[str, int]) -> Refusal | None:
        raise StoreUnavailable("database unavailable: connection refused")


def test_an_unreachable_database_falls_back_to_this_workers_memory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Fail-open to per-worker limits: the API keeps answering, and still limits."""
    limits = RateLimits(2, 10, FailoverRateLimiter(_Down(), MemoryRateLimiter()))
    with caplog.at_level(logging.WARNING, logger="ragchat.api.limits"):
        limits.check("ann", "10.0.0.1")
        limits.check("ann", "10.0.0.1")
        with pytest.raises(ApiError):
            limits.check("ann", "10.0.0.1")
    warnings = [r for r in caplog.records if "fall back" in r.getMessage()]
    assert len(warnings) == 1  # once per window, not once per request


def test_body_limits(make_app: AppFactory) -> None:
    client = make_app(max_body_bytes=1024, upload_max_bytes=4096)
    big = client.post("/chat", json={"message": "x" * 2000})
    assert big.status_code == 413
    assert big.json()["error"]["type"] == "payload_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the streamed size is counted
        yield b'{"message": "'
        for _ in range(10):
            yield b"y" * 200
        yield b'"}'

    streamed = client.post("/chat", content=chunks(), headers={"Content-Type": "application/json"})
    assert streamed.status_code == 413
    assert client.post("/chat", json={"message": "small"}).status_code == 200
    # Uploads have their own, larger limit.
    ok = client.post("/kb/notes/documents", files={"files": ("a.txt", b"word " * 600)})
    assert ok.status_code == 202
    too_big = client.post("/kb/notes/documents", files={"files": ("b.txt", b"word " * 1000)})
    assert too_big.status_code == 413


def test_concurrent_streams_are_capped(make_app: AppFactory) -> None:
    engine = FakeEngine(hang_after=1)
    client = make_app(engine, max_concurrent_streams=1)
    with client.stream("POST", "/chat/stream", json={"message": "a b c"}) as first:
        lines = first.iter_lines()  # keep a reference: dropping it closes the stream
        assert next(lines) == "event: metadata"  # the first stream is open and waiting
        second = client.post("/chat/stream", json={"message": "again"})
        assert second.status_code == 503
        assert second.headers["Retry-After"] == "5"
        assert second.json()["error"]["type"] == "too_many_streams"
    # The slot is released when the stream ends.
    engine.hang_after = None
    assert client.post("/chat/stream", json={"message": "later"}).status_code == 200


def test_cors_is_closed_by_default(make_app: AppFactory) -> None:
    client = make_app()
    origin = {"Origin": "http://evil.example"}
    assert "access-control-allow-origin" not in client.get("/health", headers=origin).headers
    preflight = client.options(
        "/chat",
        headers={**origin, "Access-Control-Request-Method": "POST"},
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_allows_configured_origins_only(make_app: AppFactory) -> None:
    client = make_app(cors_origins=["http://localhost:3000"])
    preflight = client.options(
        "/chat",
        headers={
            "Origin": "http://localhost:3000",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert preflight.headers["access-control-allow-credentials"] == "true"
    simple = client.get("/health", headers={"Origin": "http://localhost:3000"})
    assert simple.headers["access-control-allow-origin"] == "http://localhost:3000"
    other = client.get("/health", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def _per_ip_blocked(client: TestClient, forwarded_for: str) -> bool:
    """A fresh user (own cookie jar) from ``forwarded_for``: is its first answer refused?"""
    fresh = TestClient(client.app)
    r = fresh.post(
        "/query", json={"question": "hello?"}, headers={"X-Forwarded-For": forwarded_for}
    )
    return r.status_code == 429


def test_a_trusted_proxy_passes_on_the_real_client_address(make_app: AppFactory) -> None:
    """Behind a reverse proxy on another host every request comes from the proxy's address:
    trusting it, the per-address limit applies to each real client instead of to everyone."""
    client = make_app(
        rate_limit_per_minute=100, rate_limit_per_ip_per_minute=2, trusted_proxies=["testclient"]
    )
    for _ in range(2):
        assert not _per_ip_blocked(client, "203.0.113.7")
    assert _per_ip_blocked(client, "203.0.113.7")  # that client's budget is spent …
    assert not _per_ip_blocked(client, "198.51.100.9")  # … another one behind the proxy is fine


def test_forwarding_headers_from_untrusted_peers_are_ignored(make_app: AppFactory) -> None:
    """A client cannot escape the per-address limit by inventing X-Forwarded-For."""
    client = make_app(rate_limit_per_minute=100, rate_limit_per_ip_per_minute=2)
    assert not _per_ip_blocked(client, "203.0.113.1")
    assert not _per_ip_blocked(client, "203.0.113.2")
    assert _per_ip_blocked(client, "203.0.113.3")


def test_oversize_messages_and_histories_are_refused_clearly(make_app: AppFactory) -> None:
    from ragchat.api.schemas import MAX_MESSAGE_CHARS

    client = make_app(max_body_bytes=4 * MAX_MESSAGE_CHARS)
    long = client.post("/chat", json={"message": "x" * (MAX_MESSAGE_CHARS + 1)})
    assert long.status_code == 422 and "message" in long.json()["error"]["message"]
    turns = [{"role": "user", "content": "hi"}] * 201
    history = client.post("/v1/chat/completions", json={"model": "ragchat", "messages": turns})
    assert history.status_code == 422
    huge = client.post("/v1/chat/completions", content=b"{" + b" " * (4 * MAX_MESSAGE_CHARS + 1))
    assert huge.status_code == 413
