"""Uploads ingested in a child process (``api.ingest_runner = "process"``, the default): the
document lands and is served; a child that dies fails only its job, with a reason and no
server path, and the server goes on serving and ingesting."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.embed.fake import ProcessMarkingEmbedder
from ragchat.settings import ApiSettings, Settings

from .browsers import own_documents, shared_kb, signed_in
from .fakes import FakeEngine
from .test_documents import NOTE, wait_for


def _upload(client: TestClient, name: str) -> dict[str, Any]:
    r = client.post("/kb/notes/documents", files=[("files", (name, NOTE, "text/markdown"))])
    assert r.status_code == 202, r.text
    return wait_for(client, r.json()["job_id"])


def test_a_worker_crash_fails_its_job_and_the_next_upload_lands(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    settings = Settings(
        data_dir=tmp_path / "data",
        api=ApiSettings(rate_limit_per_minute=10_000, ingest_runner="process"),
    )
    app = create_app(
        settings, engine=FakeEngine(), embedder=ProcessMarkingEmbedder(marks), bootstrap=False
    )
    with TestClient(app) as client:
        signed_in(client)
        (marks / "die").touch()
        failed = _upload(client, "quokka.md")
        assert failed["status"] == "failed"
        assert "worker process was killed by signal 9" in failed["message"]
        assert str(tmp_path) not in failed["message"]
        assert client.get("/health").status_code == 200
        assert client.get("/kb/notes/documents").json() == []  # nothing of it was saved

        (marks / "die").unlink()
        done = _upload(client, "quokka.md")
        assert done["status"] == "done" and done["result"]["chunks"] >= 1
        listed = client.get("/kb/notes/documents").json()
        assert [d["file"] for d in listed] == ["quokka.md"]
        assert listed[0]["chunks"] == done["result"]["chunks"]
    children = {p.name for p in marks.glob("pid-*")} - {f"pid-{os.getpid()}"}
    assert children  # the embedding happened in other processes


WOMBATS = b"""# Wombat burrows

Wombats dig long burrows with strong claws. A wombat burrow can be many metres long and
has several entrances; other animals shelter in wombat burrows during bushfires.
"""


def test_a_small_upload_lands_while_another_users_big_one_embeds(tmp_path: Path) -> None:
    """Both go to the same knowledge base: the small one waits neither in the queue nor for
    the knowledge base's writer lock while the big one is embedding. Alice and Bob reach the
    server from two addresses (one address holds at most half the slots)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    settings = Settings(
        data_dir=tmp_path / "data",
        api=ApiSettings(rate_limit_per_minute=10_000, ingest_runner="process", ingest_slots=2),
    )
    app = create_app(
        settings, engine=FakeEngine(), embedder=ProcessMarkingEmbedder(marks), bootstrap=False
    )
    here = f"pid-{os.getpid()}"
    with TestClient(app) as alice:  # runs the lifespan; bob is another browser on it
        shared_kb(app, "notes")  # where both may upload, each privately
        (marks / "hold").write_text("burrow")  # the big job's embedding waits for this file
        bob = signed_in(TestClient(app, client=("192.0.2.2", 50000)))
        signed_in(alice)
        try:
            files = [("files", ("wombats.md", WOMBATS, "text/markdown"))]
            big = alice.post("/kb/notes/documents", files=files).json()["job_id"]
            deadline = time.time() + 60
            while not [p for p in marks.glob("pid-*") if p.name != here]:
                assert time.time() < deadline, "the big job never started embedding"
                time.sleep(0.05)
            small = _upload(bob, "quokka.md")
            assert small["status"] == "done" and small["result"]["chunks"] >= 1
            assert alice.get(f"/jobs/{big}").json()["status"] == "running"
            assert [d["file"] for d in own_documents(bob, "notes")] == ["quokka.md"]
        finally:
            (marks / "hold").unlink()  # else the server's shutdown waits for the big job
        assert wait_for(alice, big)["status"] == "done"
        assert [d["file"] for d in own_documents(alice, "notes")] == ["wombats.md"]
        assert [d["file"] for d in own_documents(bob, "notes")] == ["quokka.md"]
