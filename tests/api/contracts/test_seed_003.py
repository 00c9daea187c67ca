"""003, the safety-first medical server: ``POST /users``, ``POST /conversations``,
``POST /conversations/{id}/query``, ``GET /conversations/{id}/messages``, ``POST /query`` and
``POST /stream`` (SSE). Its UI keeps a cookie identity; the document does not spell out the
request bodies, so ``question`` and ``query`` are both accepted."""

from __future__ import annotations

import json

import httpx
import pytest

from ragchat.resources import sample_sources


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def start(browser: httpx.Client) -> str:
    assert browser.post("/users", json={"display_name": "clinician"}).status_code == 201
    r = browser.post("/conversations", json={})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


@pytest.mark.parametrize("field", ["question", "query"])
def test_a_conversation_answers_and_keeps_its_messages(browser: httpx.Client, field: str) -> None:
    conv = start(browser)
    r = browser.post(
        f"/conversations/{conv}/query", json={field: "What are the side effects of ibuprofen?"}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["conversation_id"] == conv and body["answer"] == body["message"]
    assert body["sources"] and body["sources"][0]["chunk_id"]
    follow = browser.post(f"/conversations/{conv}/query", json={field: "And the maximum dose?"})
    assert follow.status_code == 200
    messages = browser.get(f"/conversations/{conv}/messages").json()
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2
    assert messages[0]["content"] == "What are the side effects of ibuprofen?"


def test_another_callers_conversation_is_not_found(
    browser: httpx.Client, cookieless: httpx.Client
) -> None:
    conv = start(browser)
    r = cookieless.post(f"/conversations/{conv}/query", json={"query": "What did they ask?"})
    assert r.status_code == 404
    assert browser.get(f"/conversations/{conv}/messages").json() == []


def test_query_is_stateless_and_gates_unknown_questions(browser: httpx.Client) -> None:
    r = browser.post("/query", json={"query": "Why are alveoli well suited to gas exchange?"})
    assert r.status_code == 200, r.text
    assert r.json()["answer"] and r.json()["sources"]
    off = browser.post("/query", json={"question": "Who won the 1998 world cup final?"}).json()
    assert off["no_answer"] is True and off["sources"] == []


def test_stream_sends_tokens_then_a_final_event(browser: httpx.Client) -> None:
    conv = start(browser)
    with browser.stream(
        "POST", "/stream", json={"query": "What is ibuprofen?", "conversation_id": conv}
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.read().decode())
    names = [name for name, _ in events]
    assert names[0] == "metadata" and names[-1] == "final" and "token" in names
    streamed = "".join(d["text"] for n, d in events if n == "token")
    final = events[-1][1]
    assert streamed == final["reply"] and final["session_id"] == conv
    messages = browser.get(f"/conversations/{conv}/messages").json()
    assert messages[-1]["content"] == final["reply"]


def test_stream_without_a_conversation_starts_one(browser: httpx.Client) -> None:
    start(browser)
    with browser.stream("POST", "/stream", json={"question": "What is ibuprofen?"}) as r:
        events = sse_events(r.read().decode())
    session = events[0][1]["session_id"]
    assert browser.get(f"/conversations/{session}").status_code == 200


@pytest.mark.parametrize(
    ("question", "kb"),
    [
        ("What is a migraine aura?", "medical"),
        ("How much sleep does a two-year-old need?", "parenting"),
        ("Why are alveoli well suited to gas exchange?", "textbook"),
    ],
)
def test_a_question_without_kb_reaches_the_knowledge_base_that_covers_it(
    cookieless: httpx.Client, question: str, kb: str
) -> None:
    r = cookieless.post("/query", json={"question": question})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] and body["kb"] == kb and body["no_answer"] is False
    assert max(body["metadata"]["kb_coverage"].items(), key=lambda i: i[1])[0] == kb
    files = {f.name for f in sample_sources()[kb].iterdir()}
    assert body["sources"] and {s["source"] for s in body["sources"]} <= files
