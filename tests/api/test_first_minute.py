"""What a new person met in their first minute with their own files (issue 36), each as it
should be now: a wrong key refused on /v1, one answer for an empty message, knowledge-base
names without regard to case and followed through a rename, the original file name everywhere,
a file with no text failed with its reason, the samples read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from fastapi.testclient import TestClient

from ragchat.tenancy.documents import uploads_dir

from .browsers import signed_in
from .conftest import AppFactory
from .test_documents import wait_for

RULES = "Règlement du club – été 2026.md"
RULES_TEXT = (
    "# Règlement du club\n\nLes bateaux sont rangés au parc à dériveurs.\n\n"
    "## Horaires\n\nLe club ouvre à neuf heures le samedi matin pendant l'été.\n"
).encode()


def upload(client: TestClient, kb: str, *files: tuple[str, bytes]) -> dict[str, Any]:
    r = client.post(f"/kb/{kb}/documents", files=[("files", f) for f in files])
    assert r.status_code == 202, r.text
    return wait_for(client, r.json()["job_id"])


def sdk(client: TestClient, key: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url="http://testserver/v1",
        api_key=key,
        http_client=TestClient(client.app),
        max_retries=0,
    )


def test_a_wrong_or_revoked_key_is_refused_on_v1(make_app: AppFactory) -> None:
    client = make_app()
    made = client.post("/users", json={"display_name": "Ada", "create_api_key": True}).json()
    key = made["api_key"]["secret"]
    ask = {"messages": [{"role": "user", "content": "hello"}]}
    for model in ("echo", "ragchat", "kb/sailing"):
        with pytest.raises(openai.AuthenticationError) as refused:
            sdk(client, "rc_wrong").chat.completions.create(model=model, **ask)
        assert refused.value.status_code == 401
    with pytest.raises(openai.AuthenticationError):
        sdk(client, "rc_wrong").models.list()
    assert sdk(client, key).chat.completions.create(model="echo", **ask).choices
    client.delete(f"/users/me/api-keys/{made['api_key']['id']}", headers={"X-API-Key": key})
    with pytest.raises(openai.AuthenticationError):
        sdk(client, key).chat.completions.create(model="echo", **ask)
    # A client configured without a key must send some placeholder: that is no key.
    assert sdk(client, "sk-no-key").chat.completions.create(model="echo", **ask).choices


def test_an_empty_message_is_one_mistake_with_one_answer(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    conv = client.post("/conversations", json={}).json()["id"]
    answers = []
    for text in ("", "   ", "\n\t"):
        for path in ("/chat", f"/conversations/{conv}/messages"):
            r = client.post(path, json={"message": text})
            answers.append((r.status_code, r.json()["error"]["message"]))
    assert set(answers) == {(422, answers[0][1])}
    assert "The message is empty." in answers[0][1]


def test_knowledge_base_names_are_one_whatever_their_case(make_app: AppFactory) -> None:
    alice = signed_in(make_app())
    assert alice.post("/kb", json={"name": "Sailing"}).status_code == 201
    assert alice.post("/kb", json={"name": "sailing"}).status_code == 409
    assert alice.get("/kb/SAILING").json()["name"] == "Sailing"
    assert alice.post("/kb", json={"name": "tides"}).status_code == 201
    assert alice.patch("/kb/tides", json={"name": "SAILING"}).status_code == 409
    assert alice.patch("/kb/Sailing", json={"name": "sailing"}).json()["name"] == "sailing"
    bob = signed_in(TestClient(alice.app))
    assert bob.post("/kb", json={"name": "TIDES"}).status_code == 409  # taken, seen or not


def test_uploads_keep_their_names_and_renames_show_everywhere(client: TestClient) -> None:
    signed_in(client)
    client.post("/kb", json={"name": "club-fr"})
    job = upload(client, "club-fr", (RULES, RULES_TEXT))
    assert job["status"] == "done", job
    assert list(job["result"]["doc_ids"]) == [RULES]
    listed = client.get("/kb/club-fr/documents").json()
    assert [d["file"] for d in listed] == [RULES]
    folder = uploads_dir(client.app.state.ragchat.settings) / "club-fr"
    assert [p.name for p in folder.rglob("*.md")] == [RULES]  # on disk, inside its folder

    renamed = client.patch("/kb/club-fr", json={"name": "club"})
    assert renamed.status_code == 200
    answer = client.post(
        "/query", json={"question": "À quelle heure ouvre le club le samedi ?", "kb": "club"}
    ).json()
    assert answer["kb"] == "club"
    assert {s["source"] for s in answer["sources"]} == {RULES}
    assert client.get(f"/jobs/{job['id']}").json()["kb"] == "club"
    reply = client.post(
        "/chat", json={"message": "Où sont rangés les bateaux ?", "kb": "club"}
    ).json()
    assert reply["citations"] and reply["citations"][0]["source"] == RULES
    conv = client.get(f"/conversations/{reply['session_id']}").json()
    assert conv["kb"] == ["club"]
    chunk = reply["citations"][0]["chunk_id"]
    assert client.get(f"/passages/{chunk}").json()["kb"] == "club"


def test_a_file_without_text_is_a_failed_file_with_its_reason(
    client: TestClient, tmp_path: Path
) -> None:
    from docx import Document

    signed_in(client)
    blank = tmp_path / "blank.docx"
    Document().save(blank)
    note = ("boats.md", b"# Boats\n\nThe club has four dinghies and one rescue boat.\n")
    job = upload(client, "textless", ("empty.md", b""), ("blank.docx", blank.read_bytes()), note)
    assert job["status"] == "done"
    errors = {e["file"]: e["reason"] for e in job["result"]["errors"]}
    assert errors == {"empty.md": "the file is empty", "blank.docx": "no text in the Word document"}
    assert "2 file(s) failed" in job["message"] and job["result"]["documents"] == 1
    assert [d["file"] for d in client.get("/kb/textless/documents").json()] == ["boats.md"]
    only_empty = upload(client, "textless", ("nothing.txt", b"   \n"))
    assert only_empty["status"] == "failed"
    assert only_empty["result"]["errors"][0]["file"] == "nothing.txt"


def test_the_samples_are_read_only_and_uploads_go_to_ones_own(client: TestClient) -> None:
    signed_in(client)
    refused = client.post("/kb/medical/documents", files={"files": ("x.md", b"# X\n\nText.")})
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "read_only"
    assert "your own" in refused.json()["error"]["message"]
    shouted = client.post("/kb/MEDICAL/documents", files={"files": ("x.md", b"# X\n\nText.")})
    assert shouted.status_code == 403
    assert client.get("/kb/Medical").json()["name"] == "medical"
    assert client.post("/kb", json={"name": "Medical"}).status_code == 409


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLUB = ("members-guide.docx", "committee-meeting.vtt", "fees-and-tides.xlsx")


def test_citations_name_the_row_and_the_cue_on_every_route(client: TestClient) -> None:
    """A new person's Word file, transcript and spreadsheet: a question about one cell is
    cited to its row, one about one sentence to its cue, in /chat, /query and /v1."""
    signed_in(client)
    client.post("/kb", json={"name": "harbour"})
    job = upload(client, "harbour", *((n, (EXAMPLES / n).read_bytes()) for n in CLUB))
    assert job["status"] == "done" and not job["result"]["errors"], job
    cell, sentence = "How much is a mooring?", "Who is the race officer?"
    row, cue = "Fees 2026, row 6", "00:00:19.500–00:00:31.000 (Tom Reid)"

    def locations(citations: list[dict[str, Any]]) -> list[str]:
        return [c["location"] for c in citations]

    chat = client.post("/chat", json={"message": cell, "kb": "harbour"}).json()
    assert "410 EUR" in chat["message"] and locations(chat["citations"]) == [row]
    assert chat["citations"][0]["rows"] == [6, 6]
    chat = client.post("/chat", json={"message": sentence, "kb": "harbour"}).json()
    assert "Helen Park" in chat["message"] and locations(chat["citations"]) == [cue]
    query = client.post("/query", json={"question": cell, "kb": "harbour"}).json()
    assert locations(query["sources"]) == [row]
    key = client.post("/users/me/api-keys", json={"name": "sdk"}).json()["secret"]
    completion = sdk(client, key).chat.completions.create(
        model="kb/harbour", messages=[{"role": "user", "content": sentence}]
    )
    extra = completion.model_extra or {}
    assert locations(extra["citations"]) == [cue]
    assert cue in (completion.choices[0].message.content or "")
    streamed = list(
        sdk(client, key).chat.completions.create(
            model="kb/harbour", stream=True, messages=[{"role": "user", "content": cell}]
        )
    )
    assert locations((streamed[-1].model_extra or {})["citations"]) == [row]
