"""001, the companion "Ari": ``POST /chat`` answers as a list of chat bubbles,
``POST /end-session`` closes the session (its messages go to long-term memory in the
background) and ``GET /health`` reports the vector count. Its client keeps no cookie."""

from __future__ import annotations

import uuid

import httpx


def test_chat_replies_as_a_list_of_bubbles(cookieless: httpx.Client) -> None:
    session = f"ari-{uuid.uuid4().hex[:8]}"
    r = cookieless.post(
        "/chat",
        json={"session_id": session, "message": "hey Ari, how was your day?", "agent": "companion"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["session_id"] == session and body["agent"] == "companion"
    bubbles = body["messages"]
    assert isinstance(bubbles, list) and bubbles
    assert all(isinstance(b, str) and b.strip() for b in bubbles)
    if body["bubbles"]:  # the companion's own split, when it made one
        assert bubbles == body["bubbles"]
    else:
        assert bubbles == [body["message"]]


def test_every_reply_has_bubbles_whatever_the_agent(cookieless: httpx.Client) -> None:
    r = cookieless.post(
        "/chat", json={"session_id": uuid.uuid4().hex[:10], "message": "What is ibuprofen?"}
    )
    assert r.status_code == 200 and r.json()["messages"] == [r.json()["message"]]


def test_end_session_closes_it_for_good(cookieless: httpx.Client) -> None:
    session = f"ari-{uuid.uuid4().hex[:8]}"
    first = cookieless.post(
        "/chat",
        json={
            "session_id": session,
            "message": "I adopted a cat called Miso last week",
            "agent": "companion",
        },
    )
    assert first.status_code == 200
    r = cookieless.post("/end-session", json={"session_id": session})
    assert r.status_code == 202, r.text
    assert r.json()["session_id"] == session and r.json()["status"] == "closed"
    closed = cookieless.post("/chat", json={"session_id": session, "message": "still there?"})
    assert closed.status_code == 409
    missing = cookieless.post("/end-session", json={"session_id": "never-used-" + session})
    assert missing.status_code == 404


def test_health_reports_the_vector_count(cookieless: httpx.Client) -> None:
    body = cookieless.get("/health").json()
    assert body["status"] == "healthy"
    per_kb = [kb["vectors"] for kb in body["knowledge_bases"].values()]
    assert body["vectors"] == sum(per_kb) and body["vectors"] > 0
