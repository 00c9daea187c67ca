"""/query: book-wide, chapter-aware and selected-text-only answers, grounded and cited."""

from __future__ import annotations

import time

from fastapi import FastAPI
from fastapi.testclient import TestClient

from .browsers import signed_in


def test_book_wide(client: TestClient) -> None:
    r = client.post("/query", json={"question": "Why are alveoli well suited to gas exchange?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mode"] == "book-wide" and body["agent"] == "tutor" and body["kb"] == "textbook"
    assert not body["no_answer"] and "[1]" in body["answer"]
    assert body["query_time_ms"] > 0
    source = body["sources"][0]
    assert source["chunk_id"] and source["preview"] and source["score"] is not None
    assert source["chapter"] == "3" and source["source"] == "ch03-lungs.md"
    assert source["section"]


def test_chapter_aware_only_cites_that_chapter(client: TestClient) -> None:
    r = client.post(
        "/query", json={"question": "What does the sinoatrial node do?", "chapter_id": "2"}
    )
    body = r.json()
    assert body["mode"] == "chapter-aware"
    assert body["sources"] and {s["chapter"] for s in body["sources"]} == {"2"}
    assert "sinoatrial" in body["answer"].lower()
    assert body["metadata"]["retrieval"]["chapter"] == "2"


def test_selected_text_only_answers_from_the_passage(client: TestClient) -> None:
    passage = (
        "The zebrafish heart has two chambers. Its single atrium collects blood and its "
        "single ventricle pumps it to the gills."
    )
    r = client.post(
        "/query",
        json={
            "question": "How many chambers does the zebrafish heart have?",
            "context": passage,
            "use_context_only": True,
        },
    )
    body = r.json()
    assert body["mode"] == "selected-text-only"
    assert "two chambers" in body["answer"]
    assert body["sources"] and all("zebrafish" in s["preview"].lower() for s in body["sources"])


def test_query_validation_errors(client: TestClient) -> None:
    short = client.post("/query", json={"question": "hi"})
    assert short.status_code == 400 and short.json()["error"]["type"] == "invalid_question"
    no_context = client.post("/query", json={"question": "What is this?", "use_context_only": True})
    assert no_context.status_code == 400
    assert no_context.json()["error"]["type"] == "missing_context"
    assert client.post("/query", json={"question": "What?", "top_k": 0}).status_code == 422
    missing_kb = client.post("/query", json={"question": "What is bile?", "kb": "no-such-kb"})
    assert missing_kb.status_code == 404
    assert missing_kb.json()["error"]["type"] == "knowledge_base_not_visible"
    assert "not visible to this caller" in missing_kb.json()["error"]["message"]
    # a name that can never exist is the caller's mistake: 400 with the naming rule
    bad_kb = client.post("/query", json={"question": "What is bile?", "kb": "../etc"})
    assert bad_kb.status_code == 400 and bad_kb.json()["error"]["type"] == "invalid_kb_name"
    assert "letters, digits" in bad_kb.json()["error"]["message"]


def test_another_users_knowledge_base_is_not_visible_rather_than_unanswered(
    real_app: FastAPI,
) -> None:
    """Bob asking Alice's private knowledge base is told it is not visible to him, not that
    his question is not covered; Alice gets her answer."""
    alice, bob = signed_in(TestClient(real_app)), signed_in(TestClient(real_app))
    note = b"# Axolotls\n\nAxolotls regrow lost limbs, and even parts of their heart.\n"
    r = alice.post("/kb/alice-only/documents", files={"files": ("axolotl.md", note)})
    assert r.status_code == 202, r.text
    deadline = time.time() + 60
    while alice.get(f"/jobs/{r.json()['job_id']}").json()["status"] not in ("done", "failed"):
        assert time.time() < deadline
        time.sleep(0.05)
    question = {"question": "What can axolotls regrow?", "kb": "alice-only"}
    mine = alice.post("/query", json=question)
    assert mine.status_code == 200 and mine.json()["sources"]
    theirs = bob.post("/query", json=question)
    assert theirs.status_code == 404
    assert theirs.json()["error"]["type"] == "knowledge_base_not_visible"
    assert "'alice-only' is not visible to this caller" in theirs.json()["detail"]
