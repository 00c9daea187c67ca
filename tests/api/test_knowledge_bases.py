"""Knowledge bases a user owns, and conversations bound to them: create, fill, chat (with
follow-ups, streamed, over /v1), rename, share, delete — and nobody else sees them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from .test_documents import wait_for

QUILTING = b"""# Quilting club

The quilting club meets every Thursday evening in the village hall.

## Membership

Membership costs twelve pounds a year and includes fabric offcuts.

## Beginners

Beginners start with a nine-patch block. The first class lends a rotary cutter and a cutting
mat, so newcomers need bring only thread.
"""


def person(client: TestClient) -> TestClient:
    """A new browser of the same app (its own cookie identity)."""
    other = TestClient(client.app)
    assert other.get("/users/me").status_code == 200
    return other


def make_hobbies(client: TestClient, name: str = "hobbies") -> None:
    assert client.get("/users/me").status_code == 200
    created = client.post("/kb", json={"name": name, "description": "My hobby clubs"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["owned"], body["shared"], body["documents"], body["files"]) == (
        True, False, 0, [],
    )  # fmt: skip
    job = client.post(f"/kb/{name}/documents", files={"files": ("quilting.md", QUILTING)})
    assert job.status_code == 202, job.text
    assert wait_for(client, job.json()["job_id"], timeout=180)["status"] == "done"


def cited_files(reply: dict[str, Any]) -> set[str]:
    return {c["source"] for c in reply["citations"]}


@pytest.mark.xfail(
    strict=True,
    reason="known miss (issue 34): offline, 'And what do beginners start with?' after the "
    "membership question is rewritten 'What do beginners start with for quilting club "
    "membership cost?' and the reader quotes the membership sentence",
)
def test_a_follow_up_on_another_part_of_the_document_is_answered_from_it(
    client: TestClient,
) -> None:
    make_hobbies(client, "hobbies2")
    first = client.post(
        "/chat", json={"message": "How much does quilting club membership cost?", "kb": "hobbies2"}
    ).json()
    follow = client.post(
        "/chat",
        json={"session_id": first["session_id"], "message": "And what do beginners start with?"},
    ).json()
    assert "nine-patch" in follow["message"], follow


def test_a_conversation_bound_to_a_new_knowledge_base(client: TestClient) -> None:
    make_hobbies(client)
    listed = {kb["name"]: kb for kb in client.get("/kb").json()}
    assert listed["hobbies"]["owned"] and listed["hobbies"]["documents"] == 1
    assert listed["hobbies"]["description"] == "My hobby clubs"
    assert listed["medical"]["configured"] and not listed["medical"]["owned"]
    detail = client.get("/kb/hobbies").json()
    assert [f["file"] for f in detail["files"]] == ["quilting.md"]

    first = client.post(
        "/chat", json={"message": "How much does quilting club membership cost?", "kb": "hobbies"}
    ).json()
    assert "twelve pounds" in first["message"], first
    assert first["agent"] == "documents" and cited_files(first) == {"quilting.md"}
    session = first["session_id"]
    assert client.get(f"/conversations/{session}").json()["kb"] == ["hobbies"]

    # The follow-up names no knowledge base: the conversation keeps its own.
    follow = client.post(
        "/chat", json={"session_id": session, "message": "And what do beginners start with?"}
    ).json()
    assert cited_files(follow) == {"quilting.md"}, follow

    # Streamed, through the conversations API.
    with client.stream(
        "POST",
        f"/conversations/{session}/messages?stream=true",
        json={"message": "When does the club meet?"},
    ) as response:
        events = [line for line in response.iter_lines() if line.startswith("data:")]
    final = json.loads(events[-1].removeprefix("data:"))
    assert "Thursday" in final["reply"] and cited_files(final) == {"quilting.md"}

    # A question the documents don't cover: refused, nothing cited, no medical sample quoted.
    miss = client.post(
        "/chat", json={"session_id": session, "message": "What is the dose of ibuprofen?"}
    ).json()
    assert miss["no_answer"] and miss["citations"] == []

    # Unbinding goes back to the configured agents.
    back = client.post(
        "/chat",
        json={
            "session_id": session,
            "message": "What are the side effects of ibuprofen?",
            "kb": [],
        },
    ).json()
    assert back["agent"] == "medical" and back["citations"]


def test_nobody_else_sees_it_until_it_is_shared(client: TestClient) -> None:
    make_hobbies(client, "crafts")
    bob = person(client)
    assert "crafts" not in [kb["name"] for kb in bob.get("/kb").json()]
    for response in (
        bob.get("/kb/crafts"),
        bob.get("/kb/crafts/documents"),
        bob.post("/chat", json={"message": "When does the club meet?", "kb": "crafts"}),
        bob.post("/conversations", json={"kb": ["crafts"]}),
        bob.post("/query", json={"question": "When does the club meet?", "kb": "crafts"}),
        bob.post("/kb/crafts/documents", files={"files": ("x.md", b"# x\n\nsome text here")}),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "knowledge_base_not_visible"
    assert "kb/crafts" not in [m["id"] for m in bob.get("/v1/models").json()["data"]]
    assert bob.patch("/kb/crafts", json={"shared": True}).status_code == 404
    assert bob.delete("/kb/crafts").status_code == 404
    # The name is taken all the same: names are one namespace.
    assert bob.post("/kb", json={"name": "crafts"}).status_code == 409

    shared = client.patch("/kb/crafts", json={"shared": True}).json()
    assert shared["shared"] and shared["owned"]
    mine = {kb["name"]: kb for kb in bob.get("/kb").json()}["crafts"]
    assert mine["shared"] and not mine["owned"] and mine["documents"] == 1
    reply = bob.post("/chat", json={"message": "When does the club meet?", "kb": "crafts"})
    assert "Thursday" in reply.json()["message"]
    # Seeing is not owning.
    assert bob.patch("/kb/crafts", json={"name": "mine"}).status_code == 403
    assert bob.delete("/kb/crafts").status_code == 403
    doc_id = client.get("/kb/crafts").json()["files"][0]["doc_id"]
    assert bob.delete(f"/kb/crafts/documents/{doc_id}").status_code == 403

    client.patch("/kb/crafts", json={"shared": False})
    followup = bob.post(
        "/chat", json={"session_id": reply.json()["session_id"], "message": "And the price?"}
    )
    assert followup.status_code == 404
    assert followup.json()["error"]["type"] == "knowledge_base_not_visible"


def test_rename_and_delete(client: TestClient) -> None:
    make_hobbies(client, "sewing")
    conv = client.post("/conversations", json={"kb": "sewing", "title": "Sewing"}).json()
    assert conv["kb"] == ["sewing"]
    renamed = client.patch("/kb/sewing", json={"name": "needlework", "description": "Stitches"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "needlework"
    assert client.get(f"/conversations/{conv['id']}").json()["kb"] == ["needlework"]
    reply = client.post(
        f"/conversations/{conv['id']}/messages", json={"message": "When does the club meet?"}
    ).json()
    assert "Thursday" in reply["message"]
    assert client.post("/kb", json={"name": "medical"}).status_code == 409
    assert client.patch("/kb/needlework", json={"name": "parenting"}).status_code == 409

    # Shared samples are the operator's.
    assert client.delete("/kb/medical").status_code == 403
    assert client.patch("/kb/medical", json={"description": "x"}).status_code == 403

    assert client.delete("/kb/needlework").status_code == 204
    assert client.get("/kb/needlework").status_code == 404
    gone = client.post(
        f"/conversations/{conv['id']}/messages", json={"message": "When does the club meet?"}
    )
    assert gone.status_code == 404
    assert gone.json()["error"]["type"] == "knowledge_base_not_visible"


def test_a_knowledge_base_is_a_model_over_v1(client: TestClient) -> None:
    # /v1 clients (the openai SDK, Open WebUI) identify with an API key.
    user = client.post("/users", json={"display_name": "Ada", "create_api_key": True}).json()
    client = TestClient(
        client.app, headers={"Authorization": f"Bearer {user['api_key']['secret']}"}
    )
    make_hobbies(client, "clubs")
    models = [m["id"] for m in client.get("/v1/models").json()["data"]]
    assert "kb/clubs" in models and "kb/medical" in models and "ragchat" in models
    anonymous = [m["id"] for m in TestClient(client.app).get("/v1/models").json()["data"]]
    assert "kb/clubs" not in anonymous and "kb/medical" in anonymous
    reply = client.post(
        "/v1/chat/completions",
        json={
            "model": "kb/clubs",
            "messages": [
                {"role": "user", "content": "How much is membership of the quilting club?"},
                {"role": "assistant", "content": "Membership costs twelve pounds a year [1]."},
                {"role": "user", "content": "And what do beginners start with?"},
            ],
        },
    ).json()
    assert "nine-patch" in reply["choices"][0]["message"]["content"]
    assert {c["source"] for c in reply["citations"]} == {"quilting.md"}
    missing = client.post(
        "/v1/chat/completions",
        json={"model": "kb/nope", "messages": [{"role": "user", "content": "hello there"}]},
    )
    assert missing.status_code == 404
