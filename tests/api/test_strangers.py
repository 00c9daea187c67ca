"""What a stranger on the same network could do to wear a shared server down (issue 27): store
files nobody can see, mint identities, send malformed keys, numbers past the database's range,
and texts past one route's cap through another route."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ragchat.api.bounds import MAX_HISTORY_MESSAGES, MAX_MESSAGE_CHARS, MAX_SESSION_ID_CHARS

from .browsers import signed_in
from .conftest import AppFactory
from .fakes import FakeEngine

NOTE = ("note.md", b"# Quokkas\n\nQuokkas eat leaves.\n")


def _uploads(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "uploads" in p.parts]


def test_an_upload_without_key_or_cookie_is_401_and_stores_nothing(
    make_app: AppFactory, tmp_path: Path
) -> None:
    client = make_app()
    for _ in range(40):
        r = client.post("/kb/anon/documents", files={"files": NOTE}, cookies={})
        client.cookies.clear()
        assert r.status_code == 401, r.text
    body = r.json()
    assert body["error"]["type"] == "unauthorized"
    assert "POST /users" in body["error"]["message"] and "cookie" in body["error"]["message"]
    assert "set-cookie" not in r.headers  # no identity is made for a refused write
    assert _uploads(tmp_path) == []
    # The same caller once identified: its upload is its own, and visible to it.
    signed_in(client)
    accepted = client.post("/kb/anon/documents", files={"files": NOTE})
    assert accepted.status_code == 202, accepted.text
    assert client.get(f"/jobs/{accepted.json()['job_id']}").status_code == 200


def test_new_conversations_and_api_keys_need_an_identity(make_app: AppFactory) -> None:
    client = make_app()
    assert client.post("/conversations", json={}).status_code == 401
    assert client.post("/users/me/api-keys", json={"name": "k"}).status_code == 401
    signed_in(client)
    assert client.post("/conversations", json={}).status_code == 201
    assert client.post("/users/me/api-keys", json={"name": "k"}).status_code == 201


def test_new_identities_are_rate_limited_per_address(make_app: AppFactory) -> None:
    client = make_app(new_users_per_ip_per_minute=3)
    for _ in range(3):
        assert client.get("/users/me", cookies={}).status_code == 200
        client.cookies.clear()
    refused = client.get("/users/me")
    assert refused.status_code == 429 and "new identities" in refused.json()["error"]["message"]
    assert int(refused.headers["Retry-After"]) >= 1
    assert client.post("/users", json={"display_name": "x"}).status_code == 429
    assert client.post("/chat", json={"message": "hi"}).status_code == 429  # also a new user
    other = TestClient(client.app, client=("192.0.2.7", 50000))  # another address: its own
    assert (
        other.post("/users", json={"display_name": "y", "create_api_key": True}).status_code == 201
    )
    key = other.post("/users", json={}).json()  # identified by its cookie now: not new
    assert key["display_name"] == "y"


def test_uploads_are_rate_limited_per_user(make_app: AppFactory) -> None:
    client = signed_in(make_app(uploads_per_minute=2))
    for _ in range(2):
        assert client.post("/kb/notes/documents", files={"files": NOTE}).status_code == 202
    refused = client.post("/kb/notes/documents", files={"files": NOTE})
    assert refused.status_code == 429 and "uploads" in refused.json()["error"]["message"]
    assert refused.headers["Retry-After"]


MALFORMED = [
    {"Authorization": "rc_abcdef"},  # the key without "Bearer"
    {"Authorization": "Basic dXNlcjpwYXNz"},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer rc_a rc_b"},
    {"Authorization": "Token rc_abcdef"},
    {"X-API-Key": ""},
    {"X-API-Key": "rc_a rc_b"},
]


@pytest.mark.parametrize("headers", MALFORMED, ids=lambda h: repr(h)[:40])
def test_a_malformed_authorization_header_is_401_never_a_new_identity(
    make_app: AppFactory, headers: dict[str, str]
) -> None:
    client = make_app()
    for method, path in [("GET", "/users/me"), ("GET", "/conversations"), ("POST", "/chat")]:
        body = {"message": "hi"} if method == "POST" else None
        r = client.request(method, path, headers=headers, json=body)
        assert r.status_code == 401, (path, r.text)
        assert "set-cookie" not in r.headers
    if headers.get("Authorization") != "Bearer":  # OpenAI clients without a key send that
        assert client.get("/v1/models", headers=headers).status_code == 401
    assert "Malformed" in r.json()["error"]["message"]


def test_an_empty_bearer_on_v1_is_no_key_when_keys_are_optional(make_app: AppFactory) -> None:
    client = make_app()
    assert client.get("/v1/models", headers={"Authorization": "Bearer "}).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        "offset=9223372036854775808",
        "offset=9223372036854775807",
        "offset=-1",
        "offset=1000001",
        "limit=9223372036854775808",
        "limit=0",
    ],
)
def test_numbers_past_their_bound_are_422_not_500(make_app: AppFactory, query: str) -> None:
    client = signed_in(make_app())
    assert client.get(f"/conversations?{query}").status_code == 422
    cid = client.post("/conversations", json={}).json()["id"]
    r = client.get(f"/conversations/{cid}/messages?before_seq=9223372036854775808")
    assert r.status_code == 422


def _v1(text: str) -> dict[str, object]:
    return {"model": "ragchat", "messages": [{"role": "user", "content": text}]}


def test_one_message_cap_on_every_route_before_any_work(make_app: AppFactory) -> None:
    engine = FakeEngine()
    client = signed_in(make_app(engine))
    cid = client.post("/conversations", json={}).json()["id"]
    over = "x" * (MAX_MESSAGE_CHARS + 1)
    parts = [{"type": "text", "text": "x" * 5000}, {"type": "text", "text": "x" * 3001}]
    attempts = [
        ("/chat", {"message": over}),
        ("/chat/stream", {"message": over}),
        (f"/conversations/{cid}/messages", {"message": over}),
        (f"/conversations/{cid}/query", {"question": over}),
        ("/stream", {"question": over}),
        ("/v1/chat/completions", _v1(over)),
        ("/v1/chat/completions", _v1("x" * 10_000)),
        ("/v1/chat/completions", _v1("x" * 900_000)),
        (
            "/v1/chat/completions",
            {"model": "ragchat", "messages": [{"role": "user", "content": parts}]},
        ),
        (
            "/v1/chat/completions",
            {
                "model": "ragchat",
                "messages": [{"role": "user", "content": "hi"}] * (MAX_HISTORY_MESSAGES + 1),
            },
        ),
        ("/chat", {"message": "hi", "session_id": "s" * (MAX_SESSION_ID_CHARS + 1)}),
    ]
    for path, body in attempts:
        r = client.post(path, json=body)
        assert r.status_code in (413, 422), (path, r.status_code, r.text[:200])
    assert engine.calls == []  # refused before any work
    at_cap = "x" * MAX_MESSAGE_CHARS
    assert client.post("/chat", json={"message": at_cap}).status_code == 200
    assert client.post("/v1/chat/completions", json=_v1(at_cap)).status_code == 200
