"""Ingestion in a child process (``ingestion/worker.py``): the work happens in another process,
its result lands in the parent's knowledge base exactly as an in-process ingest would, and a
child that dies fails the call cleanly without touching the knowledge base."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder, ProcessMarkingEmbedder
from ragchat.errors import IngestCancelled, IngestError
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import IngestReport, Progress, ingest_paths
from ragchat.ingestion.job import IngestJob
from ragchat.ingestion.worker import IngestWorkerError, ProcessIngester
from ragchat.settings import ApiSettings, ChunkingSettings, Settings
from ragchat.vectorstores.embedded.kb import KnowledgeBase

PAGE = """# Quokkas
Quokkas are small wallabies from Rottnest Island. They eat leaves and grasses.
## Water
They survive long periods without water by getting moisture from plants.
"""


def _worker_children() -> list[int]:
    """Pids of this process's ingestion children still there (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"ragchat.ingestion.child" in cmd:
            found.append(int(proc.name))
    return found


@pytest.fixture
def docs(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "quokka.md").write_text(PAGE)
    (folder / "sleep.txt").write_text("Toddlers need about eleven hours of sleep at night.\n")
    (folder / "broken.pdf").write_bytes(b"not a pdf at all")
    return sorted(folder.iterdir())


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    path = tmp_path / "marks"
    path.mkdir()
    return path


def _ingest(
    tmp_path: Path,
    marks: Path,
    kb: KnowledgeBase,
    paths: list[Path],
    progress: Progress | None = None,
) -> IngestReport:
    settings = Settings(data_dir=tmp_path / "data", api=ApiSettings(ingest_runner="process"))
    ingester = ProcessIngester(settings, embedder=ProcessMarkingEmbedder(marks))
    job = IngestJob.build(paths, Chunker(ChunkingSettings()))
    with ingester.session(job, progress=progress) as ingest:
        return ingest(kb)


def test_a_child_process_ingests_and_the_result_lands_like_in_process(
    tmp_path: Path, docs: list[Path], marks: Path
) -> None:
    root = tmp_path / "kbs"
    kb = KnowledgeBase.open_or_create(root, "remote", HashingEmbedder())
    events: list[tuple[str, int, int]] = []
    report = _ingest(tmp_path, marks, kb, docs, progress=lambda *e: events.append(e))
    pids = {p.name for p in marks.iterdir()}
    assert pids and f"pid-{os.getpid()}" not in pids  # embedded elsewhere, not here

    local = KnowledgeBase.open_or_create(root, "local", HashingEmbedder())
    expected = ingest_paths(local, docs, Chunker(ChunkingSettings()))
    assert (report.added_files, report.documents, report.children) == (
        expected.added_files,
        expected.documents,
        expected.children,
    )
    assert report.children > 0 and kb.child_count() == report.children
    assert [type(e) for e in report.errors] == [type(e) for e in expected.errors]
    assert isinstance(report.errors[0], IngestError) and report.errors[0].source.endswith(
        "broken.pdf"
    )
    stages = [e[0] for e in events]
    assert stages.index("read") < stages.index("embed") < stages.index("save")
    assert events[-1][0] == "save" and events[-1][1] == events[-1][2] == report.children
    kb.close()
    reopened = KnowledgeBase.open(root, "remote", HashingEmbedder())  # saved to disk
    same = [c.chunk_id for c in local.catalogue.iter_children()]
    assert [c.chunk_id for c in reopened.catalogue.iter_children()] == same
    assert (
        reopened.bm25_search("quokkas water", 1)[0][0]
        == local.bm25_search("quokkas water", 1)[0][0]
    )


def test_a_child_that_dies_fails_the_call_and_leaves_the_kb_alone(
    tmp_path: Path, docs: list[Path], marks: Path
) -> None:
    kb = KnowledgeBase.open_or_create(tmp_path / "kbs", "kb", HashingEmbedder())
    (marks / "die").touch()
    with pytest.raises(IngestWorkerError, match="killed by signal 9"):
        _ingest(tmp_path, marks, kb, docs)
    assert kb.child_count() == 0 and kb.catalogue.document_count() == 0
    (marks / "die").unlink()  # the next job gets a fresh child
    report = _ingest(tmp_path, marks, kb, docs)
    assert kb.child_count() == report.children > 0


def test_a_progress_callback_that_raises_stops_the_child(
    tmp_path: Path, docs: list[Path], marks: Path
) -> None:
    """How a job is cancelled: the parent's callback raises, the child is killed."""
    kb = KnowledgeBase.open_or_create(tmp_path / "kbs", "kb", HashingEmbedder())

    def cancel(stage: str, done: int, total: int) -> None:
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        _ingest(tmp_path, marks, kb, docs, progress=cancel)
    assert kb.child_count() == 0  # nothing was committed
    assert _worker_children() == []  # the child was killed and reaped


def test_cancel_stops_a_job_in_its_child_at_once(
    tmp_path: Path, docs: list[Path], marks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a server shutdown does: the job raises ``IngestCancelled`` within a poll of the
    child's pipe, even while the child is busy, and the child is killed. The child's
    environment holds none of the server's RAGCHAT_ settings (API keys, database URL)."""
    monkeypatch.setenv("RAGCHAT_LLM__API_KEY", "canary-key")
    kb = KnowledgeBase.open_or_create(tmp_path / "kbs", "kb", HashingEmbedder())
    (marks / "hold").write_text("Quokkas")  # the child's embedding waits
    cancel = threading.Event()
    settings = Settings(data_dir=tmp_path / "data", api=ApiSettings(ingest_runner="process"))
    ingester = ProcessIngester(settings, embedder=ProcessMarkingEmbedder(marks))
    environs: list[bytes] = []

    def look_then_cancel() -> None:
        environs.extend(Path(f"/proc/{pid}/environ").read_bytes() for pid in _worker_children())
        cancel.set()

    threading.Timer(1.5, look_then_cancel).start()
    with (
        pytest.raises(IngestCancelled),
        ingester.session(
            IngestJob.build(docs, Chunker(ChunkingSettings())), cancel=cancel
        ) as ingest,
    ):
        ingest(kb)
    assert cancel.is_set() and kb.child_count() == 0
    assert len(environs) == 1 and b"canary-key" not in environs[0]
    assert b"RAGCHAT_" not in environs[0]
    assert _worker_children() == []
