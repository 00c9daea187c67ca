"""Conversations CRUD, titles, messages over JSON and SSE, and ownership (another user's
conversation is a 404 exactly like a missing one)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from .browsers import signed_in
from .conftest import AppFactory
from .fakes import parse_sse


def other_client(client: TestClient) -> TestClient:
    """A second browser on the same app (its own cookie, hence its own user)."""
    return TestClient(client.app)


def test_conversation_crud(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    created = client.post("/conversations", json={"title": "Trip planning"})
    assert created.status_code == 201
    conv = created.json()
    assert conv["title"] == "Trip planning" and conv["status"] == "active"
    cid = conv["id"]
    assert [c["id"] for c in client.get("/conversations").json()] == [cid]

    renamed = client.patch(f"/conversations/{cid}", json={"title": "  Summer   trip "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Summer trip"
    assert client.patch(f"/conversations/{cid}", json={"title": ""}).status_code == 422

    # No messages yet: nothing to title.
    assert client.post(f"/conversations/{cid}/title").status_code == 409
    turn = client.post(f"/conversations/{cid}/messages", json={"message": "Packing list for Rome"})
    assert turn.status_code == 200
    assert turn.json()["message"] == "echo: Packing list for Rome"
    assert turn.json()["citations"][0]["source"] == "notes.md"
    titled = client.post(f"/conversations/{cid}/title")
    assert titled.status_code == 200 and titled.json()["title"] == "About Packing list for Rome"

    messages = client.get(f"/conversations/{cid}/messages").json()
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Packing list for Rome"),
        ("assistant", "echo: Packing list for Rome"),
    ]
    older = client.get(f"/conversations/{cid}/messages", params={"before_seq": 2}).json()
    assert [m["seq"] for m in older] == [1]

    assert client.delete(f"/conversations/{cid}").status_code == 204
    assert client.get(f"/conversations/{cid}").status_code == 404
    assert client.get("/conversations").json() == []


def test_first_exchange_is_auto_titled(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    cid = client.post("/conversations", json={}).json()["id"]
    client.post(f"/conversations/{cid}/messages", json={"message": "Best pasta recipes"})
    assert client.get(f"/conversations/{cid}").json()["title"] == "About Best pasta recipes"
    # A title the user chose is kept.
    cid2 = client.post("/conversations", json={"title": "Mine"}).json()["id"]
    client.post(f"/conversations/{cid2}/messages", json={"message": "Anything"})
    assert client.get(f"/conversations/{cid2}").json()["title"] == "Mine"


def test_messages_stream_with_query_flag_or_accept_header(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    cid = client.post("/conversations", json={}).json()["id"]
    for kwargs in (
        {"params": {"stream": "true"}},
        {"headers": {"Accept": "text/event-stream"}},
    ):
        r = client.post(f"/conversations/{cid}/messages", json={"message": "hi there"}, **kwargs)
        assert r.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(r.text)
        assert events[0][0] == "metadata" and events[-1][0] == "final"
        assert events[-1][1]["session_id"] == cid
    assert len(client.get(f"/conversations/{cid}/messages").json()) == 4


def test_agent_choice_is_persisted_on_the_conversation(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    r = client.post("/chat", json={"message": "hello", "agent": "other"}).json()
    assert r["agent"] == "other"
    assert client.get(f"/conversations/{r['session_id']}").json()["assigned_agent"] == "other"


def test_other_users_conversations_are_404_like_missing(make_app: AppFactory) -> None:
    alice = signed_in(make_app())
    cid = alice.post("/chat", json={"message": "my secret plans"}).json()["session_id"]
    bob = other_client(alice)
    missing = "00000000-0000-0000-0000-000000000000"
    for target in (cid, missing):
        calls = [
            bob.get(f"/conversations/{target}"),
            bob.get(f"/conversations/{target}/messages"),
            bob.patch(f"/conversations/{target}", json={"title": "mine now"}),
            bob.post(f"/conversations/{target}/title"),
            bob.post(f"/conversations/{target}/messages", json={"message": "hi"}),
            bob.post("/end-session", json={"session_id": target}),
            bob.delete(f"/conversations/{target}"),
        ]
        if target == cid:  # /chat starts a conversation under an unknown id, Bob's own
            calls.append(bob.post("/chat", json={"session_id": target, "message": "hi"}))
        for r in calls:
            assert r.status_code == 404, (r.request.url, r.text)
            assert r.json()["error"]["type"] == "not_found"
            assert r.json()["error"]["message"] == "conversation not found"
    assert bob.get("/conversations").json() == []
    # Alice's conversation is untouched.
    assert alice.get(f"/conversations/{cid}").json()["title"] != "mine now"
    assert len(alice.get(f"/conversations/{cid}/messages").json()) == 2
