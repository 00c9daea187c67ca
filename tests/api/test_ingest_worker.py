"""Uploads ingested in a child process (``api.ingest_runner = "process"``, the default): the
document lands and is served; a child that dies fails only its job, with a reason and no
server path, and the server goes on serving and ingesting."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from pathlib import Path

from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.index.base import Matrix
from ragchat.index.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings

from .fakes import FakeEngine
from .test_documents import NOTE, wait_for


class ChildPidEmbedder(HashingEmbedder):
    """Marks each process that embeds documents; with ``<marks>/die`` present, a process other
    than its creator's is killed instead (an out-of-memory kill, a segfault in a parser)."""

    def __init__(self, marks: Path) -> None:
        super().__init__()
        self.marks = marks
        self.creator = os.getpid()

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        (self.marks / f"pid-{os.getpid()}").touch()
        if os.getpid() != self.creator and (self.marks / "die").exists():
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed_documents(texts, progress=progress)


def _upload(client: TestClient, name: str) -> dict:  # type: ignore[type-arg]
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
        settings, engine=FakeEngine(), embedder=ChildPidEmbedder(marks), bootstrap=False
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
