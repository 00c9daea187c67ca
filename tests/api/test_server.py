"""Over a real socket (uvicorn in a thread): a client that hangs up mid-stream leaves an
``interrupted`` message; plus the serve banner, idle-session sweeps and request logs."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn

from ragchat.api import create_app
from ragchat.api.logging import JsonFormatter, RequestIdFilter
from ragchat.api.serve import banner
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings
from ragchat.store import build_store

from .conftest import AppFactory
from .fakes import FakeEngine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[tuple[str, FakeEngine]]:
    engine = FakeEngine(hang_after=2)
    app = create_app(
        Settings(data_dir=tmp_path, api=ApiSettings(rate_limit_per_minute=1000)),
        engine=engine,
        embedder=HashingEmbedder(),
        bootstrap=False,
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}", engine
    server.should_exit = True
    thread.join(10)


def test_hang_up_mid_stream_over_a_socket_stores_interrupted(
    live_server: tuple[str, FakeEngine], caplog: pytest.LogCaptureFixture
) -> None:
    url, engine = live_server
    with httpx.Client(base_url=url, timeout=10) as client:
        tokens = []
        with client.stream("POST", "/chat/stream", json={"message": "one two three"}) as r:
            for line in r.iter_lines():
                if line.startswith("data:") and '"text"' in line:
                    tokens.append(json.loads(line[5:])["text"])
                if len(tokens) == 2:
                    break
        # The server notices the disconnect asynchronously.
        deadline = time.time() + 10
        status = None
        while time.time() < deadline:
            conv = client.get("/conversations").json()[0]
            last = client.get(f"/conversations/{conv['id']}/messages").json()[-1]
            status = last["status"]
            if status == "interrupted":
                break
            time.sleep(0.05)
    assert status == "interrupted"
    assert last["content"] == "".join(tokens) == "echo: one"
    assert engine.closed
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_banner_prints_the_url_and_a_curl_example() -> None:
    text = banner("0.0.0.0", 8000)
    assert text.startswith("ragchat is running at http://127.0.0.1:8000")
    assert "curl -s -X POST http://127.0.0.1:8000/chat" in text


def test_idle_sessions_are_closed_and_remembered(make_app: AppFactory, tmp_path: Path) -> None:
    now = [datetime(2030, 1, 1, tzinfo=UTC)]
    settings = Settings(data_dir=tmp_path / "store", session_ttl_minutes=60)
    store = build_store(settings, clock=lambda: now[0])
    client = make_app(store=store)
    said = "I started learning the cello last spring"
    cid = client.post("/chat", json={"message": said}).json()["session_id"]
    state = client.app.state.ragchat  # type: ignore[attr-defined]
    assert state.sessions.sweep() == []
    now[0] += timedelta(hours=2)
    assert state.sessions.sweep() == [cid]
    assert client.get(f"/conversations/{cid}").json()["status"] == "closed"
    me = client.get("/users/me").json()["id"]
    assert [m.text for m in store.list_memories(me)] == [said]
    assert state.memory.search(me, "learning the cello") == [said]
    store.close()


def test_request_logs_carry_ids_and_no_bodies(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_app()
    with caplog.at_level(logging.INFO, logger="ragchat"):
        r = client.post(
            "/chat", json={"message": "my password is hunter2"}, headers={"X-Request-ID": "req-42"}
        )
    end = [rec for rec in caplog.records if rec.getMessage().startswith("request end POST /chat")]
    assert len(end) == 1
    record = end[0]
    assert record.__dict__["status"] == 200 and record.__dict__["latency_ms"] > 0
    assert record.__dict__["user_id"] == client.get("/users/me").json()["id"]
    assert record.__dict__["agent"] == "echo"
    assert all("hunter2" not in rec.getMessage() for rec in caplog.records)
    RequestIdFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "req-42" == r.headers["x-request-id"]
    assert line["level"] == "INFO" and line["latency_ms"] > 0


def test_the_server_stays_responsive_while_the_engine_computes(make_app: AppFactory) -> None:
    """Engine turns run on their own loop: a turn blocking it does not stall other requests."""
    release = threading.Event()
    engine = FakeEngine(release=release)
    client = make_app(engine)
    client.get("/health")
    statuses: dict[str, int] = {}

    def post(path: str, body: dict[str, str] | None = None) -> None:
        r = client.post(path, json=body) if body is not None else client.get(path)
        statuses[path] = r.status_code

    turn = threading.Thread(target=post, args=("/chat", {"message": "slow"}))
    turn.start()
    try:
        assert engine.entered.wait(30)  # the turn now holds the engine's loop
        health = threading.Thread(target=post, args=("/health",))
        health.start()
        health.join(30)  # a liveness bound, not a speed target
        assert not health.is_alive() and statuses["/health"] == 200
        assert turn.is_alive() and "/chat" not in statuses  # answered during the turn
    finally:
        release.set()
        turn.join(30)
    assert statuses["/chat"] == 200


@pytest.mark.parametrize("path", ["/", "/health", "/docs", "/static/index.html", "/v1/models"])
def test_head_answers_like_get_without_a_body(make_app: AppFactory, path: str) -> None:
    """Uptime monitors and link checkers probe with HEAD."""
    client = make_app()
    get, head = client.get(path), client.head(path)
    assert get.status_code == 200
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]


def test_head_on_a_post_only_path_is_still_405(make_app: AppFactory) -> None:
    assert make_app().head("/chat").status_code == 405
