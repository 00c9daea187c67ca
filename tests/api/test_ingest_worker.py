"""Uploads ingested in a child process (``api.ingest_runner = "process"``, the default): the
document lands and is served; a child that dies fails only its job, with a reason and no
server path, and the server goes on serving and ingesting."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.index.fake import ProcessMarkingEmbedder
from ragchat.settings import ApiSettings, Settings

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
        (marks / "die").touch()
        failed = _upload(client, "quokka.md")
        assert failed["status"] == "failed"
        assert "worker process was killed by signal 9" in failed["message"]
        assert str(tmp_path) not in failed["message"]
        assert client.get("/health").status_code == 200
        assert client.get("/kb/notes/documents").status_code == 404  # nothing was created

        (marks / "die").unlink()
        done = _upload(client, "quokka.md")
        assert done["status"] == "done" and done["result"]["chunks"] >= 1
        listed = client.get("/kb/notes/documents").json()
        assert [d["file"] for d in listed] == ["quokka.md"]
        assert listed[0]["chunks"] == done["result"]["chunks"]
    children = {p.name for p in marks.glob("pid-*")} - {f"pid-{os.getpid()}"}
    assert children  # the embedding happened in other processes
