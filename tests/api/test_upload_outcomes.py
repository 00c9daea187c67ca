"""Uploads, file by file: each file of an upload succeeds or fails on its own with its own
reason (file names only, never a server path), files that did not land leave the disk, the
amplification caps fail the file that is over them, and a shutdown stops a running job at a
safe point with nothing saved."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.api.services.documents import SHUTDOWN_JOB_MESSAGE
from ragchat.embed.base import Matrix
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, IngestLimits, Settings
from ragchat.store import build_store

from .browsers import signed_in
from .fakes import FakeEngine
from .test_documents import NOTE, wait_for

DEEP_JSONL = b'{"_id": "d", "text": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"


class SlowEmbedder(HashingEmbedder):
    """Each embedding call takes ``delay`` seconds: a long ingestion in a test's time."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        time.sleep(self.delay)
        return super().embed_documents(texts, progress=progress)


def _settings(tmp_path: Path, **ingest: Any) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        api=ApiSettings(rate_limit_per_minute=10_000),
        ingest=IngestLimits(**ingest),
    )


@pytest.fixture
def app_client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(
        _settings(tmp_path), engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False
    )
    with TestClient(app) as client:
        yield signed_in(client)


def _uploads(tmp_path: Path) -> list[str]:
    return sorted(
        p.name for p in (tmp_path / "data").rglob("*") if p.is_file() and "uploads" in p.parts
    )


def test_each_file_succeeds_or_fails_on_its_own(app_client: TestClient, tmp_path: Path) -> None:
    files = [
        ("files", ("deep.jsonl", DEEP_JSONL)),
        ("files", ("quokka-care.md", NOTE)),
        ("files", ("empty.md", b"---\ntitle: Empty\n---\n")),
        ("files", ("broken.pdf", b"not a pdf at all")),
    ]
    r = app_client.post("/kb/notes/documents", files=files)
    job = wait_for(app_client, r.json()["job_id"])
    assert job["status"] == "done", job
    assert job["message"].endswith("; 3 file(s) failed")
    result = job["result"]
    assert result["doc_ids"]["quokka-care.md"] and result["added_files"] == 1
    assert sorted(result["errors"], key=lambda e: e["file"]) == [
        {"file": "broken.pdf", "reason": "truncated or corrupt PDF (no %%EOF marker at the end)"},
        {"file": "deep.jsonl", "reason": "line 1: JSON nested too deeply"},
        # No text is a failed file with its reason, not a listed document of 0 chunks.
        {"file": "empty.md", "reason": "no text after frontmatter"},
    ]
    assert result["warnings"] == []
    assert str(tmp_path) not in str(job) and "uploads" not in str(job)
    listed = sorted(d["file"] for d in app_client.get("/kb/notes/documents").json())
    assert listed == ["quokka-care.md"]
    # The files that failed are gone from the server; the good ones stay.
    assert _uploads(tmp_path) == ["quokka-care.md"]


def test_a_job_that_fails_entirely_leaves_no_file_behind(
    app_client: TestClient, tmp_path: Path
) -> None:
    r = app_client.post("/kb/notes/documents", files={"files": ("deep.jsonl", DEEP_JSONL)})
    job = wait_for(app_client, r.json()["job_id"])
    assert job["status"] == "failed"
    assert job["result"]["errors"] == [
        {"file": "deep.jsonl", "reason": "line 1: JSON nested too deeply"}
    ]
    assert _uploads(tmp_path) == []


def test_files_over_the_amplification_caps_fail_with_a_clear_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path, max_file_chars=5_000, max_upload_chunks=6)
    app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False)
    files = [
        ("files", ("huge.txt", b"Quokkas eat leaves. " * 500)),  # 10,000 characters
        ("files", ("a.txt", b"Alpha notes about wombats. " * 60)),  # ~3 chunks each
        ("files", ("b.txt", b"Beta notes about wombats. " * 60)),
        ("files", ("c.txt", b"Gamma notes about wombats. " * 60)),
        ("files", ("quokka-care.md", NOTE)),
    ]
    with TestClient(app) as client:
        signed_in(client)
        job = wait_for(client, client.post("/kb/notes/documents", files=files).json()["job_id"])
    errors = {e["file"]: e["reason"] for e in job["result"]["errors"]}
    assert errors["huge.txt"] == (
        "too much text: over 5,000 characters extracted (the limit per file)"
    )
    assert "the upload's chunk limit is reached (6 per upload)" in errors.values()
    assert job["status"] == "done" and job["result"]["chunks"] <= 6
    assert "huge.txt" not in _uploads(tmp_path)


def test_a_shutdown_stops_the_running_job_with_nothing_saved(tmp_path: Path) -> None:
    """Before: shutdown waited for the whole job (minutes for a big upload). Now it stops at
    the next embedding block; the job, and the one queued behind it, say how to resume."""
    settings = _settings(tmp_path)
    # It counts embedding calls made in this process: ingestion in the server process (a
    # child process's job is cancelled the same way: tests/ingestion/test_worker.py).
    settings.api.ingest_runner = "thread"
    store = build_store(settings)
    user = store.ensure_user()
    _, secret = store.create_api_key(user.id, "test")
    store.close()
    big = "\n\n".join(f"Paragraph {i} on quokka habits, diet and sleep." * 8 for i in range(800))
    embedder = SlowEmbedder(0.3)
    app = create_app(settings, engine=FakeEngine(), embedder=embedder, bootstrap=False)
    client = TestClient(app, headers={"Authorization": f"Bearer {secret}"})
    client.__enter__()
    try:
        running = client.post("/kb/notes/documents", files={"files": ("big.md", big.encode())})
        queued = client.post("/kb/notes/documents", files={"files": ("next.md", NOTE)})
        deadline = time.time() + 60
        while True:
            job = client.get(f"/jobs/{running.json()['job_id']}").json()
            if job["message"].startswith("embed "):
                break
            assert time.time() < deadline, job
            time.sleep(0.05)
    finally:
        calls_before = embedder.calls
        start = time.monotonic()
        client.__exit__(None, None, None)
        took = time.monotonic() - start
    blocks = -(-int(job["message"].split("/")[1]) // 32)  # embedding calls of the whole job
    assert embedder.calls - calls_before <= 1 < blocks - embedder.calls  # stopped early
    assert took < 10.0, took  # liveness, as the issue asks of SIGTERM

    after = build_store(settings)
    for accepted in (running, queued):
        job = after.get_job(user.id, accepted.json()["job_id"])
        assert (job.status, job.message) == ("failed", SHUTDOWN_JOB_MESSAGE)
        assert job.result is not None and job.result["interrupted"] is True
    after.close()
    assert "upload the files again" in SHUTDOWN_JOB_MESSAGE
    assert not (tmp_path / "data" / "kb" / "notes").exists()  # nothing of it was saved
    assert _uploads(tmp_path) == []


def test_the_per_user_quota_counts_what_the_user_already_has(tmp_path: Path) -> None:
    settings = _settings(tmp_path, max_user_chunks=8)
    app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False)
    notes = [
        (f"n{i}.txt", f"Note {i} about wombats and their burrows. ".encode() * 40) for i in range(3)
    ]
    with TestClient(app) as alice:
        bob = signed_in(TestClient(app))  # another browser: another user
        signed_in(alice)
        first = wait_for(
            alice, alice.post("/kb/notes/documents", files={"files": notes[0]}).json()["job_id"]
        )
        assert first["status"] == "done" and 0 < first["result"]["chunks"] <= 4
        second = alice.post("/kb/notes/documents", files=[("files", n) for n in notes[1:]])
        job = wait_for(alice, second.json()["job_id"])
        reasons = [e["reason"] for e in job["result"]["errors"]]
        assert reasons == ["your upload quota is reached (8 chunks per user)"]
        assert first["result"]["chunks"] + job["result"]["chunks"] <= 8
        # Bob's quota is his own: Alice's chunks do not count against it.
        other = bob.post("/kb/bob-notes/documents", files={"files": ("b.txt", notes[2][1])})
        assert wait_for(bob, other.json()["job_id"])["result"]["errors"] == []
