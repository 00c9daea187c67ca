"""001, the companion "Ari": ``POST /chat`` answers as a list of chat bubbles,
``POST /end-session`` closes the session (its messages go to long-term memory in the
background) and ``GET /health`` reports the vector count. Its client keeps no cookie."""

from __future__ import annotations

import uuid

import httpx
from fastapi import FastAPI

from ragchat.api.services.sessions import anonymous_owner, session_conversation_id


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


def _anonymous_messages(app: FastAPI, session: str, conversation_id: str) -> list[str]:
    store = app.state.ragchat.store
    return [m.content for m in store.list_messages(anonymous_owner(session), conversation_id)]


def test_an_ended_session_goes_on_under_the_same_id(
    cookieless: httpx.Client, real_app: FastAPI
) -> None:
    """Seed 000/001: "load or create session": after /end-session the id starts a new
    conversation; the ended one is kept (and was indexed into long-term memory)."""
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
    again = cookieless.post(
        "/chat", json={"session_id": session, "message": "still there?", "agent": "companion"}
    )
    assert again.status_code == 200, again.text
    assert again.json()["session_id"] == session
    assert again.json()["metadata"]["routing"]["router"] != "sticky"  # a fresh conversation
    old = _anonymous_messages(real_app, session, session)
    assert old[0] == "I adopted a cat called Miso last week" and len(old) == 2
    new_id = session_conversation_id(session, 1)
    assert _anonymous_messages(real_app, session, new_id)[0] == "still there?"
    # Ending it again ends the new one; the id goes on once more.
    assert cookieless.post("/end-session", json={"session_id": session}).status_code == 202
    third = cookieless.post("/chat", json={"session_id": session, "message": "hello again"})
    assert third.status_code == 200 and third.json()["session_id"] == session
    missing = cookieless.post("/end-session", json={"session_id": "never-used-" + session})
    assert missing.status_code == 404


def test_an_idled_out_session_goes_on_under_the_same_id(
    cookieless: httpx.Client, real_app: FastAPI
) -> None:
    session = f"user_{uuid.uuid4()}"  # longer than a stored id
    assert (
        cookieless.post("/chat", json={"session_id": session, "message": "hey Ari"}).status_code
        == 200
    )
    # What the idle sweep does to it (``expire_idle`` on the whole store would close the
    # other tests' conversations too).
    first_id = session_conversation_id(session, 0)
    closed = real_app.state.ragchat.store.close_conversation(anonymous_owner(session), first_id)
    assert closed.status == "closed"
    r = cookieless.post("/chat", json={"session_id": session, "message": "are you there?"})
    assert r.status_code == 200, r.text
    assert r.json()["session_id"] == session
    assert _anonymous_messages(real_app, session, first_id)[0] == "hey Ari"


def test_health_reports_the_vector_count(cookieless: httpx.Client) -> None:
    body = cookieless.get("/health").json()
    assert body["status"] == "healthy"
    per_kb = [kb["vectors"] for kb in body["knowledge_bases"].values()]
    assert body["vectors"] == sum(per_kb) and body["vectors"] > 0


def test_a_deployment_replacing_ari_answers_as_the_companion_without_an_agent(
    deployed: httpx.Client,
) -> None:
    """Seed 001's client names no agent; ``RAGCHAT_COMPAT__DEFAULT_AGENT=companion``."""
    session = f"ari-{uuid.uuid4().hex[:8]}"
    for message in ("hey, how was your day?", "What is the maximum dose of ibuprofen?"):
        r = deployed.post("/chat", json={"session_id": session, "message": message})
        assert r.status_code == 200, r.text
        assert r.json()["agent"] == "companion" and r.json()["messages"]


def test_out_of_the_box_a_turn_without_an_agent_is_routed(cookieless: httpx.Client) -> None:
    """Seeds 000 and 001 disagree on the agent of a turn naming none: 000's routing wins."""
    r = cookieless.post(
        "/chat", json={"session_id": uuid.uuid4().hex, "message": "How is migraine treated?"}
    )
    assert r.status_code == 200 and r.json()["agent"] == "medical"
