"""``ingestion/job.py``: a job hashes each file once and the ingest uses the hash it carries;
the caps are checked in one place; the chunker is the knowledge base's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion import job as job_module
from ragchat.ingestion.ingest import ingest_job, ingest_paths
from ragchat.ingestion.job import IngestJob, UploadCaps, chunker_for, file_key, hash_file
from ragchat.settings import ChunkingSettings
from ragchat.vectorstores.embedded.kb import KnowledgeBase

LONG = "\n\n".join(
    f"Paragraph {i}. Quokkas live on Rottnest Island and eat leaves, grasses and succulents; "
    f"they get most of their water from the plants they eat, which is note number {i}."
    for i in range(40)
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quokkas.md").write_text("# Quokkas\n\n" + LONG)
    (docs / "sleep.txt").write_text("Toddlers need about eleven hours of sleep at night.\n")
    return docs


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    hashed: list[Path] = []

    def counted(path: Path) -> str:
        hashed.append(path)
        return hash_file(path)

    monkeypatch.setattr(job_module, "hash_file", counted)
    return hashed


def test_each_file_is_hashed_once_per_ingest(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed = _counting(monkeypatch)
    kb = KnowledgeBase.open_or_create(tmp_path / "kb", "kb", HashingEmbedder())
    first = ingest_paths(kb, [folder], Chunker(ChunkingSettings()))
    assert first.added_files == 2
    assert sorted(p.name for p in hashed) == ["quokkas.md", "sleep.txt"]
    hashed.clear()
    again = ingest_paths(kb, [folder], Chunker(ChunkingSettings()))
    assert again.unchanged_files == 2 and len(hashed) == 2  # "unchanged" is the same hash


def test_the_ingest_uses_the_hash_the_job_carries(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = IngestJob.build([folder], Chunker(ChunkingSettings()))
    hashed = _counting(monkeypatch)
    kb = KnowledgeBase.open_or_create(tmp_path / "kb", "kb", HashingEmbedder())
    report = ingest_job(kb, job)
    assert report.added_files == 2 and hashed == []  # nothing hashed again
    for file in job.files:
        assert kb.catalogue.file_sha(file.key) == file.sha == hash_file(file.path)


def test_the_files_held_unchanged_are_skipped_ahead(folder: Path) -> None:
    sleep = folder / "sleep.txt"
    held = {file_key(sleep): hash_file(sleep)}
    job = IngestJob.build([folder], Chunker(ChunkingSettings()), held=held.get)
    assert job.skip == {file_key(sleep)}
    assert job.sha_of(sleep) == hash_file(sleep)


def test_an_unreadable_file_fails_alone(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "locked.txt").write_text("secret")

    def unreadable(path: Path) -> str:
        if path.name == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return hash_file(path)

    monkeypatch.setattr(job_module, "hash_file", unreadable)
    job = IngestJob.build([folder], Chunker(ChunkingSettings()))
    [locked] = [f for f in job.files if f.path.name == "locked.txt"]
    assert locked.sha is None
    kb = KnowledgeBase.open_or_create(tmp_path / "kb", "kb", HashingEmbedder())
    report = ingest_job(kb, job)
    assert report.added_files == 2
    assert [(e.source, e.reason) for e in report.errors] == [
        (str(locked.path), "cannot read: Permission denied")
    ]


def test_the_caps_count_what_they_admit() -> None:
    meter = UploadCaps(file_chunks=10, total_chunks=15).meter()
    assert meter.admit(100, 8) is None
    assert "too many chunks" in (meter.admit(100, 11) or "")
    assert "chunk limit" in (meter.admit(100, 8) or "")  # 8 + 8 > 15, not counted
    assert meter.admit(100, 7) is None and meter.chunks == 15


def test_a_knowledge_base_keeps_the_chunking_it_was_made_with(folder: Path, tmp_path: Path) -> None:
    """A knowledge base made with 300-character children is ingested into later by a
    configuration whose chunks are 700: it keeps its 300."""
    small = ChunkingSettings(child_size=300, child_overlap=50)
    kb = KnowledgeBase.create(tmp_path / "kb", "kb", HashingEmbedder(), chunking=small.model_dump())
    configured = ChunkingSettings()
    chunker = chunker_for(kb, configured)
    assert chunker.settings == small
    report = ingest_paths(kb, [folder], chunker)
    expected = ingest_paths(
        KnowledgeBase.create(tmp_path / "other", "kb", HashingEmbedder()),
        [folder],
        Chunker(small),
    )
    default = ingest_paths(
        KnowledgeBase.create(tmp_path / "third", "kb", HashingEmbedder()),
        [folder],
        Chunker(configured),
    )
    assert report.children == expected.children > default.children
    assert kb.manifest.chunking == small.model_dump()


def test_a_new_knowledge_base_takes_the_settings_chunking(tmp_path: Path) -> None:
    configured = ChunkingSettings(child_size=400)
    assert chunker_for(None, configured).settings == configured
    bare = KnowledgeBase.create(tmp_path / "kb", "kb", HashingEmbedder())  # records nothing
    assert chunker_for(bare, configured).settings == configured
