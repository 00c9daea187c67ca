from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import DocumentNotFound
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import (
    IngestReport,
    UploadCaps,
    all_unchanged,
    ingest_paths,
    prune_missing,
    remove_paths,
)
from ragchat.ingestion.job import hash_files
from ragchat.settings import ChunkingSettings
from ragchat.vectorstores.embedded.kb import KnowledgeBase

PAGE = """---
title: Ibuprofen
chapter: 1
---
# Ibuprofen
## Uses
Ibuprofen relieves pain and fever. It also reduces inflammation.
## Side effects
Stomach upset is the most common side effect. Take it with food.
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ibuprofen.md").write_text(PAGE)
    (docs / "notes.txt").write_text("Toddlers need about eleven hours of sleep at night.\n")
    return docs


def _kb(root: Path, name: str = "kb") -> KnowledgeBase:
    return KnowledgeBase.open_or_create(root, name, HashingEmbedder())


def _ingest(kb: KnowledgeBase, *paths: Path):  # type: ignore[no-untyped-def]
    return ingest_paths(kb, list(paths), Chunker(ChunkingSettings()))


def test_ingest_then_reingest_is_a_no_op(folder: Path, tmp_path: Path) -> None:
    kb = _kb(tmp_path / "data")
    first = _ingest(kb, folder)
    assert (first.added_files, first.documents) == (2, 2)
    assert kb.child_count() == first.children > 0
    embed_calls = kb.embedder.calls  # type: ignore[attr-defined]
    again = _ingest(kb, folder)
    assert (again.unchanged_files, again.documents, again.children) == (2, 0, 0)
    assert kb.embedder.calls == embed_calls  # type: ignore[attr-defined]  (nothing re-embedded)
    assert kb.child_count() == first.children


def test_a_no_op_writes_nothing_and_is_known_without_the_model(
    folder: Path, tmp_path: Path
) -> None:
    kb = _kb(tmp_path / "data")
    kb_dir = tmp_path / "data" / "kb"
    assert all_unchanged(kb_dir, hash_files([folder])) is None  # not ingested yet
    _ingest(kb, folder)
    assert all_unchanged(kb_dir, hash_files([folder])) == 2
    stamps = {p.name: p.stat().st_mtime_ns for p in kb_dir.iterdir() if p.suffix != ".sqlite"}
    assert _ingest(kb, folder).unchanged_files == 2
    after = {p.name: p.stat().st_mtime_ns for p in kb_dir.iterdir() if p.suffix != ".sqlite"}
    assert after == stamps  # the index files were not rewritten
    (folder / "notes.txt").write_text("Toddlers need about twelve hours of sleep.\n")
    assert all_unchanged(kb_dir, hash_files([folder])) is None
    (folder / "new.md").write_text("# New\nA new page.\n")
    assert all_unchanged(kb_dir, hash_files([folder / "new.md"])) is None
    assert all_unchanged(tmp_path / "data" / "missing", hash_files([folder])) is None


def test_ids_are_deterministic_across_runs(folder: Path, tmp_path: Path) -> None:
    ids = []
    for run in ("a", "b"):
        kb = _kb(tmp_path / run)
        _ingest(kb, folder)
        ids.append([c.chunk_id for c in kb.catalogue.iter_children()])
    assert ids[0] == ids[1]
    assert all("_s" in cid or "_c" in cid for cid in ids[0])


def test_changed_file_replaces_its_chunks(folder: Path, tmp_path: Path) -> None:
    kb = _kb(tmp_path / "data")
    _ingest(kb, folder)
    (folder / "ibuprofen.md").write_text(PAGE.replace("Take it with food.", "Avoid alcohol."))
    report = _ingest(kb, folder)
    assert (report.replaced_files, report.removed_documents, report.unchanged_files) == (1, 1, 1)
    assert kb.catalogue.document_count() == 2
    texts = " ".join(c.text for c in kb.catalogue.iter_children())
    assert "Avoid alcohol" in texts and "with food" not in texts
    assert kb.bm25_search("food", 5) == []


def test_identical_content_under_two_names_is_stored_once(folder: Path, tmp_path: Path) -> None:
    (folder / "copy.md").write_text(PAGE)
    kb = _kb(tmp_path / "data")
    report = _ingest(kb, folder)
    assert (report.documents, report.duplicate_documents) == (2, 1)


def test_removed_file_can_be_deleted(folder: Path, tmp_path: Path) -> None:
    kb = _kb(tmp_path / "data")
    _ingest(kb, folder)
    (folder / "notes.txt").unlink()
    assert prune_missing(kb, [folder]) == 1
    assert kb.catalogue.document_count() == 1
    assert kb.bm25_search("toddlers sleep", 5) == []
    assert remove_paths(kb, [str(folder / "ibuprofen.md")]) == 1
    assert kb.child_count() == 0
    with pytest.raises(DocumentNotFound):
        remove_paths(kb, [str(folder / "never-ingested.md")])


def test_bad_file_is_reported_and_others_still_ingested(folder: Path, tmp_path: Path) -> None:
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Body\ntext\n")
    kb = _kb(tmp_path / "data")
    report = _ingest(kb, folder)
    assert [Path(e.source).name for e in report.errors] == ["broken.md"]
    assert report.documents == 2
    # The broken file was not recorded, so fixing it and re-running ingests it.
    (folder / "broken.md").write_text("# Body\nFixed text about amoxicillin.\n")
    assert _ingest(kb, folder).added_files == 1
    assert kb.bm25_search("amoxicillin", 1)


def test_changes_survive_reopen(folder: Path, tmp_path: Path) -> None:
    kb = _kb(tmp_path / "data")
    _ingest(kb, folder)
    kb.close()
    again = KnowledgeBase.open(tmp_path / "data", "kb", HashingEmbedder())
    assert again.manifest.documents == 2 and again.manifest.files == 2
    assert _ingest(again, folder).unchanged_files == 2


DEEP_JSONL = b'{"_id": "d", "text": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"


def test_a_file_nested_200000_levels_deep_fails_alone(folder: Path, tmp_path: Path) -> None:
    """Today's RecursionError failed the whole call; now it is that file's error."""
    (folder / "deep.jsonl").write_bytes(DEEP_JSONL)
    kb = _kb(tmp_path / "data")
    report = _ingest(kb, folder)
    assert [(Path(e.source).name, e.reason) for e in report.errors] == [
        ("deep.jsonl", "line 1: JSON nested too deeply")
    ]
    assert (report.added_files, report.documents) == (2, 2)
    assert kb.catalogue.document_count() == 2 and kb.bm25_search("toddlers sleep", 1)


def test_a_changed_file_that_fails_keeps_its_old_version(folder: Path, tmp_path: Path) -> None:
    kb = _kb(tmp_path / "data")
    _ingest(kb, folder)
    (folder / "ibuprofen.md").write_text("---\ntitle: [unclosed\n---\n# Body\ntext\n")
    report = _ingest(kb, folder)
    assert [Path(e.source).name for e in report.errors] == ["ibuprofen.md"]
    assert (report.replaced_files, report.removed_documents) == (0, 0)
    assert kb.catalogue.document_count() == 2 and kb.bm25_search("food", 5)


def _capped(kb: KnowledgeBase, caps: UploadCaps, *paths: Path) -> IngestReport:
    return ingest_paths(kb, list(paths), Chunker(ChunkingSettings()), caps=caps)


def test_a_file_over_the_text_or_chunk_cap_fails_alone(folder: Path, tmp_path: Path) -> None:
    (folder / "huge.txt").write_text("Quokkas eat leaves. " * 500)  # 10,000 characters
    kb = _kb(tmp_path / "data")
    report = _capped(kb, UploadCaps(file_chars=5_000), folder)
    assert [(Path(e.source).name, e.reason) for e in report.errors] == [
        ("huge.txt", "too much text: over 5,000 characters extracted (the limit per file)")
    ]
    assert report.added_files == 2 and not kb.bm25_search("quokkas", 1)
    report = _capped(_kb(tmp_path / "other"), UploadCaps(file_chunks=3), folder)
    assert [e.reason for e in report.errors] == ["too many chunks: 17 (at most 3 per file)"]


def test_the_upload_caps_count_across_files(folder: Path, tmp_path: Path) -> None:
    for i in range(3):
        (folder / f"part{i}.txt").write_text(f"Part {i} of the notes on quokkas. " * 20)
    kb = _kb(tmp_path / "data")
    report = _capped(kb, UploadCaps(total_chunks=4), folder)
    failed = sorted(Path(e.source).name for e in report.errors)
    assert failed and all(
        e.reason == "the upload's chunk limit is reached (4 per upload)" for e in report.errors
    )
    assert report.children <= 4 and report.added_files == 5 - len(failed)


class _Stop(Exception):
    pass


@pytest.mark.parametrize("stage", ["read", "embed"])
def test_stopping_at_a_safe_point_saves_nothing(folder: Path, tmp_path: Path, stage: str) -> None:
    """The progress callback is where a shutdown stops an ingestion: whatever it raises,
    the knowledge base on disk is as before, and the same call later ingests everything."""
    kb = _kb(tmp_path / "data")
    (folder / "more.md").write_text(PAGE.replace("Ibuprofen", "Naproxen"))

    def progress(at: str, done: int, total: int) -> None:
        if at == stage and done >= 1:
            raise _Stop

    with pytest.raises(_Stop):
        ingest_paths(kb, [folder], Chunker(ChunkingSettings()), progress=progress)
    kb.close()
    again = _kb(tmp_path / "data")
    assert again.child_count() == 0 and again.catalogue.document_count() == 0
    assert _ingest(again, folder).added_files == 3
