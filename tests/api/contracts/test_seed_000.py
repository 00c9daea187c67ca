"""000, the multi-agent medical chatbot: ``POST /chat {session_id, message}`` →
``{session_id, message, agent, metadata}`` with a session id the client makes up, and
``GET /health`` → ``{status: "healthy", version}``. Its client keeps no cookie."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from ragchat.api.app import create_app
from ragchat.embed.base import Embedder
from ragchat.errors import ConfigError
from ragchat.settings import CompatSettings, Settings

from .conftest import signed_in
from .test_seed_003 import sse_events


def new_session() -> str:
    return f"user_{uuid.uuid4().hex[:12]}"


def test_health_says_healthy_with_a_version(cookieless: httpx.Client) -> None:
    r = cookieless.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "healthy" and isinstance(body["version"], str)


def test_a_client_chosen_session_starts_on_first_use_and_continues_by_id(
    cookieless: httpx.Client,
) -> None:
    session = new_session()
    r = cookieless.post(
        "/chat", json={"session_id": session, "message": "What are the side effects of ibuprofen?"}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["session_id"] == session
    assert isinstance(body["message"], str) and body["message"]
    assert body["agent"] == "medical"
    assert isinstance(body["metadata"], dict)
    assert body["metadata"]["sources"] and {"name", "content"} <= set(
        body["metadata"]["sources"][0]
    )

    # Another request, no cookie: the same conversation, the agent stays assigned.
    follow = cookieless.post(
        "/chat", json={"session_id": session, "message": "What is the maximum dose?"}
    )
    assert follow.status_code == 200, follow.text
    assert follow.json()["session_id"] == session
    assert follow.json()["agent"] == "medical"
    assert follow.json()["metadata"]["routing"]["router"] == "sticky"


def test_sessions_are_separate_by_id(cookieless: httpx.Client) -> None:
    a, b = new_session(), new_session()
    cookieless.post("/chat", json={"session_id": a, "message": "What is ibuprofen for?"})
    r = cookieless.post("/chat", json={"session_id": b, "message": "What is the maximum dose?"})
    assert r.status_code == 200
    assert r.json()["metadata"]["routing"]["router"] != "sticky"  # b has no history


def test_request_validation(cookieless: httpx.Client) -> None:
    assert cookieless.post("/chat", json={"session_id": new_session()}).status_code == 422
    assert (
        cookieless.post("/chat", json={"session_id": new_session(), "message": ""}).status_code
        == 422
    )
    too_long = "x" * 129
    r = cookieless.post("/chat", json={"session_id": too_long, "message": "hello"})
    assert r.status_code == 422 and "session_id" in r.text
    blank = cookieless.post("/chat", json={"session_id": "   ", "message": "hello"})
    assert blank.status_code == 400 and "session_id" in blank.json()["detail"]


@pytest.mark.parametrize(
    "session",
    [
        f"web-{uuid.uuid4()}",  # 40 characters
        f"user_{uuid.uuid4()}_{uuid.uuid4()}",
        "s" * 120 + uuid.uuid4().hex[:8],  # 128 characters, the bound
    ],
)
def test_long_client_chosen_session_ids_work(cookieless: httpx.Client, session: str) -> None:
    r = cookieless.post(
        "/chat", json={"session_id": session, "message": "What are the side effects of ibuprofen?"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["session_id"] == session and r.json()["agent"] == "medical"
    follow = cookieless.post(
        "/chat", json={"session_id": session, "message": "What is the maximum dose?"}
    )
    assert follow.status_code == 200, follow.text
    assert follow.json()["session_id"] == session
    assert follow.json()["metadata"]["routing"]["router"] == "sticky"
    ended = cookieless.post("/end-session", json={"session_id": session})
    assert ended.status_code == 202 and ended.json()["session_id"] == session


def test_a_long_session_id_of_a_signed_in_user_stays_theirs(cookieless: httpx.Client) -> None:
    alice = signed_in(cookieless, "alice")
    session = f"user_{uuid.uuid4()}"
    first = cookieless.post(
        "/chat", json={"session_id": session, "message": "What is ibuprofen?"}, headers=alice
    )
    assert first.status_code == 200, first.text
    stranger = cookieless.post("/chat", json={"session_id": session, "message": "What is it?"})
    assert stranger.status_code == 404
    again = cookieless.post(
        "/chat", json={"session_id": session, "message": "And the dose?"}, headers=alice
    )
    assert again.status_code == 200 and again.json()["session_id"] == session


def test_a_signed_in_users_session_id_never_opens_for_anyone_else(
    cookieless: httpx.Client,
) -> None:
    alice, bob = signed_in(cookieless, "alice"), signed_in(cookieless, "bob")
    session = new_session()
    r = cookieless.post(
        "/chat",
        json={"session_id": session, "message": "What are the side effects of ibuprofen?"},
        headers=alice,
    )
    assert r.status_code == 200, r.text
    for stranger in (bob, {}):  # another user, then no identity at all
        r = cookieless.post(
            "/chat", json={"session_id": session, "message": "What did I ask?"}, headers=stranger
        )
        assert r.status_code == 404, r.text
        assert (
            cookieless.post(
                "/end-session", json={"session_id": session}, headers=stranger
            ).status_code
            == 404
        )
    mine = cookieless.get(f"/conversations/{session}/messages", headers=alice).json()
    assert [m["role"] for m in mine] == ["user", "assistant"]  # nothing added by the others
    again = cookieless.post(
        "/chat", json={"session_id": session, "message": "What is the maximum dose?"}, headers=alice
    )
    assert again.status_code == 200 and again.json()["session_id"] == session


def test_a_browser_users_conversation_does_not_open_by_id_alone(
    cookieless: httpx.Client, browser: httpx.Client
) -> None:
    """Anonymous sessions are the ones started without identity; a cookie identity's
    conversation (ragchat's page) stays its own even though that user has no name."""
    mine = browser.post("/chat", json={"message": "What are the side effects of ibuprofen?"})
    session = mine.json()["session_id"]
    r = cookieless.post("/chat", json={"session_id": session, "message": "What did they ask?"})
    assert r.status_code == 404
    assert len(browser.get(f"/conversations/{session}/messages").json()) == 2


def test_a_deployment_answers_with_the_seeds_agent_names(deployed: httpx.Client) -> None:
    """``RAGCHAT_COMPAT__AGENT_ALIASES='{"support": "emotional_support", "medical":
    "rag_agent"}'``: replies name the agent as seed 000's client reads it; requests may use
    either name."""
    session = new_session()
    r = deployed.post(
        "/chat",
        json={
            "session_id": session,
            "message": "What are the side effects of ibuprofen?",
            "agent": "rag_agent",
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["agent"] == "rag_agent" and r.json()["metadata"]["sources"]
    sad = deployed.post(
        "/chat",
        json={
            "session_id": new_session(),
            "message": "I feel so lonely and sad lately",
            "agent": "support",
        },
    )
    assert sad.status_code == 200 and sad.json()["agent"] == "emotional_support"
    with deployed.stream(
        "POST",
        "/chat/stream",
        json={"session_id": session, "message": "And the maximum dose?", "agent": "rag_agent"},
    ) as stream:
        events = sse_events(stream.read().decode())
    assert [d["agent"] for n, d in events if n in ("metadata", "final")] == ["rag_agent"] * 2
    unknown = deployed.post(
        "/chat", json={"session_id": new_session(), "message": "hi", "agent": "nobody"}
    )
    assert unknown.status_code == 400 and "rag_agent" in unknown.json()["detail"]


def test_settings_naming_unknown_agents_stop_the_start(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    for compat in (
        CompatSettings(default_agent="ari"),
        CompatSettings(agent_aliases={"nurse": "rag_agent"}),
        CompatSettings(agent_aliases={"support": "medical"}),
        CompatSettings(no_answer_messages={"librarian": "Not here."}),
    ):
        custom = settings.model_copy(update={"data_dir": tmp_path, "compat": compat})
        with (
            pytest.raises(ConfigError),
            TestClient(create_app(custom, embedder=embedder, bootstrap=False)),
        ):
            pass
