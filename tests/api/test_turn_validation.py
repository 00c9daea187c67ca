"""The engine validates a turn (``ChatEngine.validate``) before the API stores anything: a
refused message or agent leaves the conversation as it was, on every chat route."""

from __future__ import annotations

import pytest

from .conftest import AppFactory
from .fakes import FakeEngine

UNKNOWN = {"type": "unknown_agent", "message": "Unknown agent 'nobody'; configured: echo, other."}


@pytest.mark.parametrize(
    ("path", "stream"),
    [
        ("/conversations/{cid}/messages", False),
        ("/conversations/{cid}/messages?stream=true", True),
        ("/chat", False),
        ("/chat/stream", True),
    ],
)
def test_an_unknown_agent_is_refused_by_the_engine_and_nothing_is_stored(
    make_app: AppFactory, path: str, stream: bool
) -> None:
    engine = FakeEngine()
    client = make_app(engine)
    first = client.post("/chat", json={"message": "hello there"})
    assert first.status_code == 200, first.text
    cid = first.json()["session_id"]
    before = client.get(f"/conversations/{cid}/messages").json()
    engine.validated.clear()

    body = {"message": "and again", "agent": "nobody"}
    if path.startswith("/chat"):
        body["session_id"] = cid
    r = client.post(path.format(cid=cid), json=body)

    assert r.status_code == 400, r.text  # before any stream starts
    assert {k: r.json()["error"][k] for k in UNKNOWN} == UNKNOWN
    assert engine.validated == ["and again"]  # the engine's validation refused it
    assert client.get(f"/conversations/{cid}/messages").json() == before
    assert len(engine.calls) == 1  # only the first turn ran


def test_a_refused_first_message_starts_no_conversation(make_app: AppFactory) -> None:
    engine = FakeEngine()
    client = make_app(engine)
    for path in ("/chat", "/chat/stream"):
        r = client.post(path, json={"message": "hi", "agent": "nobody"})
        assert r.status_code == 400 and r.json()["error"]["type"] == "unknown_agent"
    r = client.post("/chat", json={"session_id": "my-session", "message": "hi", "agent": "x"})
    assert r.status_code == 400
    assert client.get("/conversations").json() == []
    assert engine.calls == []
