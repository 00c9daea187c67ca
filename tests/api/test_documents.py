"""Uploads: job with progress → listed → searchable through /query → deleted; ownership; jobs
left unfinished by a restart."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.api.services import documents as documents_service
from ragchat.api.services.documents import INTERRUPTED_JOB_MESSAGE
from ragchat.embed.fake import HashingEmbedder
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion import job as job_module
from ragchat.ingestion.ingest import ingest_paths
from ragchat.settings import ApiSettings, ChunkingSettings, Settings
from ragchat.store import build_store
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .browsers import own_documents, shared_kb, signed_in
from .conftest import AppFactory
from .fakes import FakeEngine

NOTE = b"""# Quokka care

Quokkas are small wallabies from Rottnest Island. A quokka eats leaves, grasses and the
succulent plant Guichenotia. Quokkas can survive long periods without water by getting
moisture from the plants they eat.
"""


def wait_for(client: TestClient, job_id: str, timeout: float = 60) -> dict[str, Any]:
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        seen.append(job["status"])
        if job["status"] in ("done", "failed"):
            job["seen"] = seen
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish: {seen[-5:]}")


def test_upload_ingest_search_delete(client: TestClient) -> None:
    signed_in(client)
    r = client.post(
        "/kb/wildlife/documents", files=[("files", ("quokka-care.md", NOTE, "text/markdown"))]
    )
    assert r.status_code == 202, r.text
    accepted = r.json()
    assert accepted["kb"] == "wildlife" and accepted["files"] == ["quokka-care.md"]
    job = wait_for(client, accepted["job_id"])
    [listed] = [kb for kb in client.get("/kb").json() if kb["name"] == "wildlife"]
    assert {".docx", ".pptx", ".xlsx", ".html", ".epub", ".png"} <= set(listed["file_types"])
    assert job["status"] == "done" and job["progress"] == 1.0 and job["done"] == 1
    assert job["result"]["documents"] == 1 and job["result"]["chunks"] >= 1
    doc_id = job["result"]["doc_ids"]["quokka-care.md"][0]

    docs = client.get("/kb/wildlife/documents").json()
    assert [(d["doc_id"], d["file"], d["shared"]) for d in docs] == [
        (doc_id, "quokka-care.md", False)
    ]
    assert docs[0]["chunks"] >= 1

    # The engine's retrievers see the new document without a restart.
    answer = client.post(
        "/query", json={"question": "What do quokkas eat?", "kb": "wildlife"}
    ).json()
    assert answer["kb"] == "wildlife" and not answer["no_answer"]
    assert answer["sources"][0]["source"] == "quokka-care.md"
    assert "leaves" in answer["answer"]

    # A citation's preview opens to the whole passage.
    passage = client.get(f"/passages/{answer['sources'][0]['chunk_id']}").json()
    assert passage["kb"] == "wildlife" and passage["file"] == "quokka-care.md"
    assert "Guichenotia" in passage["text"] and passage["title"] == "Quokka care"

    assert client.delete(f"/kb/wildlife/documents/{doc_id}").status_code == 204
    assert client.get("/kb/wildlife/documents").json() == []
    # The knowledge base the upload created stays the uploader's, empty: nothing to cite.
    gone = client.post("/query", json={"question": "What do quokkas eat?", "kb": "wildlife"})
    assert gone.status_code == 200 and gone.json()["no_answer"] and not gone.json()["sources"]
    assert client.delete("/kb/wildlife").status_code == 204
    gone = client.post("/query", json={"question": "What do quokkas eat?", "kb": "wildlife"})
    assert gone.status_code == 404 and "not visible" in gone.json()["detail"]


def test_an_upload_is_chunked_as_its_knowledge_base_was_made(
    make_app: AppFactory, tmp_path: Path
) -> None:
    """A knowledge base made with 300-character chunks (other settings than this server's)
    keeps them for an upload, through the ingestion child."""
    client = signed_in(make_app())
    state = cast(Any, client.app).state.ragchat
    small = ChunkingSettings(child_size=300, child_overlap=50)
    configured = state.registry.chunking
    state.registry.chunking = small.model_dump()  # as a server with those settings made it
    try:
        shared_kb(client.app, "notes")
    finally:
        state.registry.chunking = configured
    assert state.settings.chunking != small
    text = "\n\n".join(
        f"Note {i}. Quokkas live on Rottnest Island and eat leaves, grasses and succulents; "
        f"they get most of their water from the plants they eat, says note number {i}."
        for i in range(30)
    )
    r = client.post(
        "/kb/notes/documents", files=[("files", ("long.md", text.encode(), "text/markdown"))]
    )
    assert r.status_code == 202, r.text
    job = wait_for(client, r.json()["job_id"])
    assert job["status"] == "done", job

    def children(chunking: ChunkingSettings, folder: str) -> int:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "long.md").write_text(text)
        kb = KnowledgeBase.create(tmp_path / folder / "kb", "kb", HashingEmbedder())
        return ingest_paths(kb, [tmp_path / folder], Chunker(chunking)).children

    expected = children(small, "small")
    assert job["result"]["chunks"] == expected > children(state.settings.chunking, "big")
    with state.registry.reading("notes") as kb:
        assert kb.manifest.chunking == small.model_dump()


@pytest.mark.parametrize("runner", ["thread", "process"])
def test_an_upload_hashes_each_file_once(
    make_app: AppFactory, monkeypatch: pytest.MonkeyPatch, runner: str
) -> None:
    """The job carries each file's hash: "unchanged", "already there" and "keep the file"
    all compare it; nothing in this process hashes a file again (a child hashes nothing)."""
    hashed: list[str] = []
    hash_file = job_module.hash_file

    def counted(path: Path) -> str:
        hashed.append(path.name)
        return hash_file(path)

    client = signed_in(make_app(ingest_runner=runner))
    monkeypatch.setattr(job_module, "hash_file", counted)
    monkeypatch.setattr(documents_service, "hash_file", counted)
    files = [
        ("files", ("quokka-care.md", NOTE, "text/markdown")),
        ("files", ("empty.txt", b"", "text/plain")),  # fails: its file is removed
    ]
    job = wait_for(client, client.post("/kb/hashes/documents", files=files).json()["job_id"])
    assert job["status"] == "done" and job["result"]["documents"] == 1
    assert sorted(hashed) == ["empty.txt", "quokka-care.md"]


def test_other_users_documents_and_jobs_are_404(make_app: AppFactory) -> None:
    alice = signed_in(make_app())
    accepted = alice.post("/kb/notes/documents", files={"files": ("a.txt", NOTE)}).json()
    job = wait_for(alice, accepted["job_id"])
    doc_id = job["result"]["doc_ids"]["a.txt"][0]
    bob = signed_in(TestClient(alice.app))
    assert bob.get(f"/jobs/{accepted['job_id']}").status_code == 404
    assert bob.get("/jobs/00000000-0000-0000-0000-000000000000").status_code == 404
    # Alice's knowledge base is hers: to Bob it does not exist.
    r = bob.get("/kb/notes/documents")
    assert r.status_code == 404 and r.json()["error"]["type"] == "knowledge_base_not_visible"
    assert "notes" not in [kb["name"] for kb in bob.get("/kb").json()]
    for target in (doc_id, "f" * 64):
        r = bob.delete(f"/kb/notes/documents/{target}")
        assert r.status_code == 404
    assert [d["doc_id"] for d in alice.get("/kb/notes/documents").json()] == [doc_id]
    chunk_id = f"{doc_id}_s0_c0"  # the text loader's first section, first child
    assert alice.get(f"/passages/{chunk_id}").status_code == 200
    assert bob.get(f"/passages/{chunk_id}").status_code == 404
    assert bob.get("/passages/no-such-chunk").status_code == 404


def test_shared_sample_documents_cannot_be_deleted(client: TestClient) -> None:
    docs = client.get("/kb/medical/documents").json()
    assert len(docs) >= 9 and all(d["shared"] for d in docs)
    r = client.delete(f"/kb/medical/documents/{docs[0]['doc_id']}")
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    assert len(client.get("/kb/medical/documents").json()) == len(docs)


def test_upload_validation(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    bad_type = client.post("/kb/notes/documents", files={"files": ("report.odt", b"x")})
    assert bad_type.status_code == 415
    message = bad_type.json()["error"]["message"]
    assert "report.odt (.odt)" in message and ".pdf" in message and ".docx" in message
    mixed = client.post(
        "/kb/notes/documents", files=[("files", ("ok.md", b"# ok")), ("files", ("x.exe", b"x"))]
    )
    assert mixed.status_code == 415 and "x.exe" in mixed.json()["error"]["message"]
    assert client.post("/kb/notes/documents").status_code == 400  # no files
    bad_name = client.post("/kb/..%2Fetc/documents", files={"files": ("a.md", b"# a")})
    assert bad_name.status_code in (400, 404)
    bad = client.post("/kb/-bad/documents", files={"files": ("a.md", b"# a")})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_kb_name"
    assert "'-bad'" in bad.json()["error"]["message"]
    assert client.get("/kb/nope/documents").status_code == 404
    assert client.get("/kb/notes/documents").status_code == 404  # nothing was created


def test_a_file_that_fails_to_parse_fails_the_job(make_app: AppFactory) -> None:
    client = signed_in(make_app())
    accepted = client.post(
        "/kb/notes/documents", files={"files": ("broken.pdf", b"not a pdf at all")}
    ).json()
    job = wait_for(client, accepted["job_id"])
    assert job["status"] == "failed"
    assert job["result"]["errors"][0]["file"] == "broken.pdf"
    # ... and leaves the caller's new knowledge base empty, theirs to fill or delete.
    (notes,) = [kb for kb in client.get("/kb").json() if kb["name"] == "notes"]
    assert notes["documents"] == 0 and notes["owned"] and not notes["shared"]
    assert "notes" not in client.get("/health").json()["knowledge_bases"]


def test_a_job_left_unfinished_by_a_restart_is_reported_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path, api=ApiSettings(rate_limit_per_minute=1000))
    before = build_store(settings)
    user = before.ensure_user()
    _, secret = before.create_api_key(user.id, "test")
    running = before.create_job(user.id, "notes", total=1)
    before.update_job(running.id, status="running", progress=0.4, message="embed 2/5")
    queued = before.create_job(user.id, "notes", total=1)
    done = before.create_job(user.id, "notes", total=1)
    before.update_job(done.id, status="done", progress=1.0, message="1 document(s), 3 chunks")
    before.close()  # the server dies here, mid-ingestion

    app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False)
    headers = {"Authorization": f"Bearer {secret}"}
    with caplog.at_level(logging.WARNING, logger="ragchat"), TestClient(app, headers=headers) as c:
        for job in (running, queued):
            got = c.get(f"/jobs/{job.id}").json()
            assert (got["status"], got["message"]) == ("failed", INTERRUPTED_JOB_MESSAGE)
            assert got["message"].startswith("interrupted: the server restarted")
        assert c.get(f"/jobs/{running.id}").json()["progress"] == 0.4
        finished = c.get(f"/jobs/{done.id}").json()
        assert (finished["status"], finished["message"]) == ("done", "1 document(s), 3 chunks")
    assert "marked 2 upload job(s) interrupted by a restart as failed" in caplog.text


def _quokka_answer(client: TestClient, kb: str) -> dict[str, Any]:
    """The answer; a knowledge base the caller sees nothing in is refused, reported here as
    an answer without sources."""
    r = client.post("/query", json={"question": "What do quokkas eat?", "kb": kb})
    if r.status_code == 404:
        assert r.json()["error"]["type"] == "knowledge_base_not_visible", r.text
        return {"answer": r.json()["detail"], "no_answer": True, "sources": []}
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


def _grounded_in_quokkas(answer: dict[str, Any]) -> bool:
    return not answer["no_answer"] and any("quokka" in s["source"] for s in answer["sources"])


def _upload(client: TestClient, kb: str, name: str) -> str:
    accepted = client.post(f"/kb/{kb}/documents", files={"files": (name, NOTE)}).json()
    job = wait_for(client, accepted["job_id"])
    assert job["status"] == "done", job
    docs = [d for d in client.get(f"/kb/{kb}/documents").json() if not d["shared"]]
    assert len(docs) == 1
    return str(docs[0]["doc_id"])


def test_an_upload_grounds_only_its_owners_answers(real_app: Any) -> None:
    """Alice's private file never reaches Bob's answers; when Bob uploads the same bytes the
    one document is both of theirs, and either deleting keeps it for the other."""
    alice, bob = signed_in(TestClient(real_app)), signed_in(TestClient(real_app))
    kb = "private-notes"
    shared_kb(real_app, kb)
    doc_id = _upload(alice, kb, "quokka-care.md")
    assert _grounded_in_quokkas(_quokka_answer(alice, kb))
    leaked = _quokka_answer(bob, kb)
    assert not _grounded_in_quokkas(leaked) and "Guichenotia" not in leaked["answer"]
    assert own_documents(bob, kb) == []

    assert _upload(bob, kb, "my-quokka-notes.md") == doc_id  # same bytes, same document
    assert _grounded_in_quokkas(_quokka_answer(bob, kb))

    assert alice.delete(f"/kb/{kb}/documents/{doc_id}").status_code == 204
    assert own_documents(alice, kb) == []
    assert not _grounded_in_quokkas(_quokka_answer(alice, kb))
    assert [d["doc_id"] for d in own_documents(bob, kb)] == [doc_id]
    bob_answer = _quokka_answer(bob, kb)
    assert _grounded_in_quokkas(bob_answer)
    chunk_id = bob_answer["sources"][0]["chunk_id"]
    assert bob.get(f"/passages/{chunk_id}").status_code == 200
    assert alice.get(f"/passages/{chunk_id}").status_code == 404

    assert bob.delete(f"/kb/{kb}/documents/{doc_id}").status_code == 204
    assert own_documents(bob, kb) == []
    assert not _grounded_in_quokkas(_quokka_answer(bob, kb))


def test_sharing_identical_uploads_stays_invisible(real_app: Any) -> None:
    """Bob uploads the bytes Alice uploaded as salaries.txt: his job, listing, citations and
    passages read exactly as if he were first, under his own file name; Alice's file name
    never reaches him, not even after she deletes her copy."""
    alice, bob, carol = (
        signed_in(TestClient(real_app)),
        signed_in(TestClient(real_app)),
        signed_in(TestClient(real_app)),
    )
    kb = "team-notes"
    shared_kb(real_app, kb)
    body = NOTE.replace(b"# Quokka care\n\n", b"")  # a text file: its title is its file name

    first = alice.post(f"/kb/{kb}/documents", files={"files": ("salaries.txt", body)}).json()
    alice_job = wait_for(alice, first["job_id"])
    second = bob.post(f"/kb/{kb}/documents", files={"files": ("my-notes.txt", body)}).json()
    bob_job = wait_for(bob, second["job_id"])

    for key in ("status", "message"):
        assert bob_job[key] == alice_job[key]
    for key in ("documents", "chunks", "added_files"):
        assert bob_job["result"][key] == alice_job["result"][key]
    assert "duplicate_documents" not in bob_job["result"]
    assert bob_job["result"]["doc_ids"] == {
        "my-notes.txt": alice_job["result"]["doc_ids"]["salaries.txt"]
    }

    def seen_by_bob() -> str:
        listing = own_documents(bob, kb)
        assert [(d["file"], d["title"]) for d in listing] == [("my-notes.txt", "my-notes")]
        answer = _quokka_answer(bob, kb)
        assert answer["sources"] and answer["sources"][0]["source"] == "my-notes.txt"
        assert answer["sources"][0]["title"] == "my-notes"
        passage = bob.get(f"/passages/{answer['sources'][0]['chunk_id']}").json()
        assert (passage["file"], passage["title"]) == ("my-notes.txt", "my-notes")
        kbs = {k["name"]: k for k in bob.get("/kb").json()}
        assert kbs[kb]["documents"] == 2  # the shared seed and his own
        return str(listing) + str(answer) + str(passage) + str(kbs) + str(bob_job)

    assert "salaries" not in seen_by_bob()
    assert [d["file"] for d in own_documents(alice, kb)] == ["salaries.txt"]
    assert _quokka_answer(alice, kb)["sources"][0]["source"] == "salaries.txt"
    carols = {k["name"]: k for k in carol.get("/kb").json()}
    assert carols[kb]["documents"] == 1  # the shared seed only: nothing of theirs for Carol

    doc_id = alice_job["result"]["doc_ids"]["salaries.txt"][0]
    assert alice.delete(f"/kb/{kb}/documents/{doc_id}").status_code == 204
    assert "salaries" not in seen_by_bob()


HOSTILE_NAMES = [
    "../escape.md",
    "../../../../etc/passwd.md",
    "/etc/absolute.md",
    "..\\windows.md",
    "%2e%2e/encoded.md",
    "%2e%2e%2fencoded2.md",
    "nul\x00byte.md",
    "x" * 300 + ".md",
    "ünïcødé ✓ ﬁle.md",
    ".hidden.md",
    "con:stream.md",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_upload_names_stay_inside_the_users_folder(
    make_app: AppFactory, tmp_path: Path, name: str
) -> None:
    """Whatever the client calls its file, it is saved under the caller's own upload folder with
    a plain name (≤ 120 characters), and the listing shows that name."""
    client = signed_in(make_app())
    before = {p for p in tmp_path.rglob("*") if p.is_file()}
    r = client.post(
        "/kb/notes/documents", files={"files": (name, b"# Notes\n\nQuokkas eat leaves.")}
    )
    assert r.status_code == 202, r.text
    job = wait_for(client, r.json()["job_id"])
    assert job["status"] == "done", job
    saved = {p for p in tmp_path.rglob("*") if p.is_file()} - before
    uploads = [p for p in saved if "uploads" in p.parts]
    assert len(uploads) == 1
    path = uploads[0]
    assert path.parent.parent.name == "notes" and path.parent.parent.parent.name == "uploads"
    assert len(path.name) <= 120 and "/" not in path.name and "\x00" not in path.name
    assert not path.name.startswith(".") and ".." not in path.name
    listed = client.get("/kb/notes/documents").json()
    assert [d["file"] for d in listed] == [path.name]
    assert str(tmp_path) not in str(job) and path.parent.name not in str(listed)


def test_a_name_that_is_only_dots_has_no_type_and_nothing_is_saved(
    make_app: AppFactory, tmp_path: Path
) -> None:
    client = signed_in(make_app())
    r = client.post("/kb/notes/documents", files={"files": ("..md", b"# x")})
    assert r.status_code == 415
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and "uploads" in p.parts]


CANARY = "ZEBRA-CANARY-7731"


def test_uploads_racing_with_queries_never_reach_another_users_answers(real_app: Any) -> None:
    """Bob keeps uploading (and deleting) files that hold a canary and answer Alice's question
    better than anything she can see, while Alice keeps asking it; none of her answers,
    citations or passages ever carries the canary."""
    import threading

    alice, bob = signed_in(TestClient(real_app)), signed_in(TestClient(real_app))
    kb = "race-notes"
    shared_kb(real_app, kb)  # where both may upload, each privately
    _upload(alice, kb, "quokka-care.md")  # so that Alice's questions have something to find
    stop = threading.Event()
    errors: list[str] = []

    def bob_uploads() -> None:
        try:
            for i in range(6):
                note = (
                    f"# Quokka diet {i}\n\nWhat do quokkas eat? Quokkas eat leaves and "
                    f"{CANARY} pellets number {i}; quokkas eat grasses.\n"
                ).encode()
                r = bob.post(f"/kb/{kb}/documents", files={"files": (f"diet-{i}.md", note)})
                job = wait_for(bob, r.json()["job_id"])
                if job["status"] != "done":
                    errors.append(str(job))
                if i % 2:
                    for d in bob.get(f"/kb/{kb}/documents").json():
                        if d["file"] == f"diet-{i}.md":
                            bob.delete(f"/kb/{kb}/documents/{d['doc_id']}")
        except Exception as exc:  # the reader loop below must end either way
            errors.append(repr(exc))
        finally:
            stop.set()

    uploader = threading.Thread(target=bob_uploads)
    uploader.start()
    seen = 0
    try:
        while not stop.is_set() or seen < 5:
            answer = _quokka_answer(alice, kb)
            text = str(answer)
            for source in answer["sources"]:
                text += alice.get(f"/passages/{source['chunk_id']}").text
            assert CANARY not in text, text
            seen += 1
    finally:
        uploader.join(timeout=120)
    assert not errors, errors
    assert CANARY in str(_quokka_answer(bob, kb))  # the canary is findable: the test can fail
