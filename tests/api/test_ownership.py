"""Ownership probes: Alice owns a conversation (with a canary in it), an upload job, a document,
a passage and an API key. Every route that takes one of those ids is tried as Bob (his own
key), with no key (a fresh anonymous caller) and with a bad key: each answer is the 404 of a
missing id (401 for the bad key), never Alice's data, and afterwards her things are untouched."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from .conftest import AppFactory

CANARY = "CANARY-OWNERSHIP-5521"
NOTE = f"# Alice's notes\n\nThe vault code is {CANARY}. Quokkas eat leaves.\n".encode()


def _user(client: TestClient, name: str) -> dict[str, str]:
    made = TestClient(client.app).post(
        "/users", json={"display_name": name, "create_api_key": True}
    )
    assert made.status_code in (200, 201), made.text
    body = made.json()
    return {"Authorization": f"Bearer {body['api_key']['secret']}", "key_id": body["api_key"]["id"]}


@pytest.fixture
def world(make_app: AppFactory) -> dict[str, Any]:
    client = make_app()
    alice = _user(client, "alice")
    bob = _user(client, "bob")
    a = {"Authorization": alice["Authorization"]}
    chat = client.post("/chat", json={"message": f"remember {CANARY}"}, headers=a).json()
    upload = client.post(
        "/kb/alice-notes/documents", files={"files": ("vault.md", NOTE)}, headers=a
    ).json()
    deadline = time.time() + 60
    while client.get(f"/jobs/{upload['job_id']}", headers=a).json()["status"] != "done":
        assert time.time() < deadline
        time.sleep(0.05)
    doc = client.get("/kb/alice-notes/documents", headers=a).json()[0]
    return {
        "client": client,
        "alice": a,
        "callers": {
            "bob": {"Authorization": bob["Authorization"]},
            "anonymous": {},
            "bad key": {"Authorization": "Bearer rc_not_a_real_key"},
        },
        "conversation": chat["session_id"],
        "job": upload["job_id"],
        "doc": doc["doc_id"],
        "key_id": alice["key_id"],
    }


Probe = Callable[[TestClient, dict[str, Any], dict[str, str]], Any]
PROBES: dict[str, Probe] = {
    "get conversation": lambda c, w, h: c.get(f"/conversations/{w['conversation']}", headers=h),
    "rename conversation": lambda c, w, h: c.patch(
        f"/conversations/{w['conversation']}", json={"title": "pwned"}, headers=h
    ),
    "retitle conversation": lambda c, w, h: c.post(
        f"/conversations/{w['conversation']}/title", headers=h
    ),
    "delete conversation": lambda c, w, h: c.delete(
        f"/conversations/{w['conversation']}", headers=h
    ),
    "list messages": lambda c, w, h: c.get(
        f"/conversations/{w['conversation']}/messages", headers=h
    ),
    "post message": lambda c, w, h: c.post(
        f"/conversations/{w['conversation']}/messages", json={"message": "hi"}, headers=h
    ),
    "chat in it": lambda c, w, h: c.post(
        "/chat", json={"session_id": w["conversation"], "message": "what was the code?"}, headers=h
    ),
    "stream in it": lambda c, w, h: c.post(
        "/chat/stream",
        json={"session_id": w["conversation"], "message": "what was the code?"},
        headers=h,
    ),
    "end it": lambda c, w, h: c.post(
        "/end-session", json={"session_id": w["conversation"]}, headers=h
    ),
    "job": lambda c, w, h: c.get(f"/jobs/{w['job']}", headers=h),
    "documents": lambda c, w, h: c.get("/kb/alice-notes/documents", headers=h),
    "delete document": lambda c, w, h: c.delete(f"/kb/alice-notes/documents/{w['doc']}", headers=h),
    "passage": lambda c, w, h: c.get(f"/passages/{w['doc']}_s0_c0", headers=h),
    "revoke key": lambda c, w, h: c.delete(f"/users/me/api-keys/{w['key_id']}", headers=h),
}
ALLOWED = {
    # The caller's own (empty) view of a knowledge base: the canary check is what matters.
    # (Retrieval isolation through /query and /chat: test_documents.py, on the real engine.)
    "documents": {200, 404},
}


@pytest.mark.parametrize("probe", sorted(PROBES))
@pytest.mark.parametrize("caller", ["bob", "anonymous", "bad key"])
def test_nobody_else_reaches_alices_things(world: dict[str, Any], probe: str, caller: str) -> None:
    client = TestClient(world["client"].app)  # a fresh cookie jar: no identity but the key
    response = PROBES[probe](client, world, world["callers"][caller])
    expected = {401} if caller == "bad key" else ALLOWED.get(probe, {404})
    assert response.status_code in expected, (probe, caller, response.status_code, response.text)
    assert CANARY not in response.text and "vault" not in response.text.lower()

    # Alice's things are untouched.
    alice, c = world["alice"], world["client"]
    conversation = c.get(f"/conversations/{world['conversation']}", headers=alice).json()
    assert conversation["title"] != "pwned"
    messages = c.get(f"/conversations/{world['conversation']}/messages", headers=alice).json()
    assert CANARY in messages[0]["content"]
    assert [d["doc_id"] for d in c.get("/kb/alice-notes/documents", headers=alice).json()] == [
        world["doc"]
    ]
    assert c.get("/users/me", headers=alice).status_code == 200
