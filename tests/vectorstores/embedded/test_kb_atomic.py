"""Atomic commits of the embedded store (vectorstores/embedded/generations.py): readers keep a
consistent snapshot, uncommitted writes never show, leftovers of a crash are rolled back on
open, the old layout opens and moves into generations, and ``kb check`` / ``kb repair`` fix
what is broken."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import IndexStateError
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.bm25 import BM25Index
from ragchat.vectorstores.embedded import generations as gens
from ragchat.vectorstores.embedded.check import check, repair
from ragchat.vectorstores.embedded.chunkstore import ChunkStore
from ragchat.vectorstores.embedded.dense import FlatIndex
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.lock import LOCK

TEXTS = {
    "a": ["ibuprofen relieves pain", "take ibuprofen with food"],
    "b": ["toddlers need eleven hours of sleep", "naps shorten with age"],
    "c": ["quokkas eat leaves and grasses", "quokkas live on Rottnest Island"],
}


def _chunks(doc_id: str) -> list[Chunk]:
    texts = TEXTS[doc_id]
    parent = Chunk(f"{doc_id}_P", doc_id, " ".join(texts), 0, None, True, {})
    return [parent] + [
        Chunk(f"{doc_id}_c{i}", doc_id, t, i, parent.chunk_id, False, {})
        for i, t in enumerate(texts)
    ]


def _add(kb: KnowledgeBase, doc_id: str, *, save: bool = True) -> None:
    kb.add_chunks(_chunks(doc_id), save=False)
    kb.add_document_row(
        DocumentRow(doc_id, f"{doc_id}.md", "markdown", doc_id, f"/f/{doc_id}.md", 2, 1, {}, "t")
    )
    kb.catalogue.record_file(f"/f/{doc_id}.md", f"sha-{doc_id}", "t")
    if save:
        kb.save()


def _open(root: Path) -> KnowledgeBase:
    return KnowledgeBase.open(root, "demo", HashingEmbedder())


def _counts(kb: KnowledgeBase) -> tuple[int, int, int, int]:
    return (kb.child_count(), len(kb.bm25), len(kb.catalogue.documents()), kb.manifest.children)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    kb = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder())
    _add(kb, "a")
    kb.close()
    return tmp_path


def test_a_reader_keeps_its_snapshot_across_commits(root: Path) -> None:
    reader = _open(root)
    writer = _open(root)
    writer.delete_document("a", save=False)
    _add(writer, "b")
    _add(writer, "c")  # three commits: the reader's generation folder is gone by now
    assert [h[0] for h in reader.bm25_search("ibuprofen", 5)] == ["a_c0", "a_c1"]
    assert [c.chunk_id for c in reader.get_chunks(["a_c0", "a_P"])] == ["a_c0", "a_P"]
    assert reader.catalogue.has_document("a") and not reader.catalogue.has_document("b")
    assert _counts(reader) == (2, 2, 1, 2)
    assert reader.stale() and not writer.stale()
    fresh = _open(root)
    assert _counts(fresh) == (4, 4, 2, 4)
    assert fresh.bm25_search("ibuprofen", 5) == []
    for kb in (reader, writer, fresh):
        kb.close()


def test_an_uncommitted_write_is_invisible_and_discarded(root: Path) -> None:
    writer = _open(root)
    _add(writer, "b", save=False)
    other = _open(root)
    assert _counts(other) == (2, 2, 1, 2)  # not the writer's 4
    working = root / "demo" / gens.gen_name(writer.generation.number + 1)  # type: ignore[union-attr]
    assert working.is_dir()  # a live writer's generation survives another open
    writer.close()
    assert not working.exists()
    assert _counts(_open(root)) == (2, 2, 1, 2)
    other.close()


def test_a_crashed_write_is_rolled_back_on_open(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = _open(root)
    _add(writer, "b", save=False)
    work = writer._work
    assert work is not None
    writer._release()  # what a kill -9 does: the lock goes, the folder stays
    caplog.set_level(logging.WARNING)
    kb = _open(root)
    assert "rolled back an interrupted write" in caplog.text
    assert not work.dir.exists()
    assert _counts(kb) == (2, 2, 1, 2)
    _add(kb, "b")  # writing again works, with the same counts as one clean run
    assert _counts(_open(root)) == (4, 4, 2, 4)


def test_a_second_writer_that_opened_an_older_state_is_refused(root: Path) -> None:
    first, second = _open(root), _open(root)
    _add(first, "b")
    with pytest.raises(IndexStateError, match="changed by another writer"):
        _add(second, "c")
    second.close()
    assert _counts(_open(root)) == (4, 4, 2, 4)


def test_unchanged_indexes_are_shared_with_the_previous_generation(root: Path) -> None:
    kb = _open(root)
    before = kb.generation
    kb.catalogue.record_file("/f/extra.md", "sha-x", "t")  # a catalogue-only write
    kb.save()
    assert before is not None and kb.generation is not None
    old, new = before.dir / "dense_vectors.npy", kb.generation.dir / "dense_vectors.npy"
    assert old.stat().st_ino == new.stat().st_ino
    assert _counts(_open(root)) == (2, 2, 1, 2)


def _to_legacy(root: Path) -> Path:
    """The layout before generations: every file in the knowledge base's own folder."""
    path = root / "demo"
    gen = gens.current(path)
    assert gen is not None
    for f in gen.dir.iterdir():
        shutil.copy(f, path / f.name)
    for n in gens.generations(path):
        shutil.rmtree(path / gens.gen_name(n))
    (path / gens.CURRENT).unlink()
    return path


def test_the_old_layout_opens_and_moves_into_a_generation_on_its_first_write(root: Path) -> None:
    path = _to_legacy(root)
    kb = _open(root)
    assert kb.generation is not None and kb.generation.legacy
    assert KnowledgeBase.names(root) == ["demo"]
    _add(kb, "b")
    assert (path / gens.CURRENT).is_file() and not (path / "manifest.json").exists()
    assert not (path / "chunks.sqlite").exists()
    assert _counts(_open(root)) == (4, 4, 2, 4)
    assert KnowledgeBase.describe(root, "demo")["generation"] == 1


def _break_like_the_old_code(root: Path, *, rows: bool = False) -> None:
    """What a kill -9 of the old save path left (issue 18): the chunk store and the dense index
    hold an ingestion whose BM25 index and manifest were never written (nor, unless ``rows``,
    its document row and file record)."""
    path = _to_legacy(root)
    store = ChunkStore(path / "chunks.sqlite")
    dense = FlatIndex.load(path, 256)
    chunks = _chunks("b")
    labels = {c.chunk_id: 100 + i for i, c in enumerate(c for c in chunks if not c.is_parent)}
    store.begin()
    store.insert_chunks(chunks, labels)
    if rows:
        store.insert_document(DocumentRow("b", "b.md", "markdown", "b", "/f/b.md", 2, 1, {}, "t"))
        store.record_file("/f/b.md", "sha-b", "t")
    store.commit()
    store.close()
    vecs = HashingEmbedder().embed_documents([c.text for c in chunks if not c.is_parent])
    dense.add(np.asarray(list(labels.values()), dtype=np.int64), vecs)
    dense.save(path)


def test_check_and_repair_fix_a_knowledge_base_the_old_code_broke(root: Path) -> None:
    _break_like_the_old_code(root)
    with pytest.raises(IndexStateError, match="inconsistent"):
        _open(root)
    report = check(root, "demo")
    assert not report.ok
    assert any(
        "manifest 2, chunk store 4, dense index 4, bm25 index 2" in p for p in report.problems
    )
    assert any("no document row" in p for p in report.problems)
    done = repair(root, "demo")
    assert any("dropped the chunks of 1 unfinished document" in d for d in done)
    assert check(root, "demo").ok
    kb = _open(root)
    assert _counts(kb) == (2, 2, 1, 2)
    _add(kb, "b")  # re-ingesting the unfinished document works (no duplicate chunk ids)
    assert _counts(_open(root)) == (4, 4, 2, 4)


def test_repair_completes_an_old_ingestion_whose_rows_were_written(root: Path) -> None:
    """The issue's "manifest 300, chunk store 600, dense 600, bm25 300": everything but BM25
    and the manifest was saved, so repair completes the write instead of dropping it."""
    _break_like_the_old_code(root, rows=True)
    assert any(
        "manifest 2, chunk store 4, dense index 4" in p for p in check(root, "demo").problems
    )
    assert any("rebuilt" in d for d in repair(root, "demo"))
    kb = _open(root)
    assert _counts(kb) == (4, 4, 2, 4)
    assert [h[0] for h in kb.bm25_search("toddlers sleep", 1)] == ["b_c0"]


def test_repair_rebuilds_a_missing_bm25_index_from_the_chunk_store(root: Path) -> None:
    kb = _open(root)
    _add(kb, "b")
    gen = gens.current(root / "demo")
    assert gen is not None
    (gen.dir / "bm25_tf.npz").unlink()
    assert "BM25" in " ".join(check(root, "demo").problems)
    assert any("rebuilt" in d for d in repair(root, "demo"))
    fixed = _open(root)
    assert _counts(fixed) == (4, 4, 2, 4)
    assert [h[0] for h in fixed.bm25_search("ibuprofen", 5)] == ["a_c0", "a_c1"]


def test_repair_rolls_back_when_the_chunk_store_is_lost(root: Path) -> None:
    kb = _open(root)
    _add(kb, "b")
    gen = gens.current(root / "demo")
    assert gen is not None
    (gen.dir / "chunks.sqlite").unlink()
    assert not check(root, "demo").ok
    assert any("rolled back" in d for d in repair(root, "demo"))
    assert _counts(_open(root)) == (2, 2, 1, 2)


def test_a_create_that_died_before_its_commit_is_not_a_knowledge_base(tmp_path: Path) -> None:
    (tmp_path / "demo" / gens.gen_name(1)).mkdir(parents=True)
    assert KnowledgeBase.names(tmp_path) == []
    kb = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder())
    _add(kb, "a")
    assert _counts(_open(tmp_path)) == (2, 2, 1, 2)


def test_describe_reads_the_committed_generation(root: Path) -> None:
    info = KnowledgeBase.describe(root, "demo")  # created as g1, one ingestion: g2
    assert info["generation"] == 2 and info["children"] == 2
    assert BM25Index.load(root / "demo" / gens.gen_name(2)).labels.tolist() == [0, 1]


def test_a_current_naming_a_missing_generation_is_repaired_by_rolling_back(root: Path) -> None:
    kb = _open(root)
    _add(kb, "b")
    (root / "demo" / gens.CURRENT).write_text("g00000042\n")
    with pytest.raises(IndexStateError):
        _open(root)  # and nothing was tidied away on the way
    assert gens.generations(root / "demo") == [2, 3]
    assert any("rolled back" in d for d in repair(root, "demo"))
    assert _counts(_open(root)) == (4, 4, 2, 4)


def test_a_knowledge_base_whose_lock_cannot_be_created_still_opens(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only copy (a mounted volume): recovery has nothing to tidy and is skipped."""
    real_open = os.open

    def no_lock(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith(LOCK):
            raise PermissionError(13, "read-only file system")
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gens.os, "open", no_lock)
    assert _counts(_open(root)) == (2, 2, 1, 2)


def test_an_hnsw_knowledge_base_commits_and_shares_its_graph(tmp_path: Path) -> None:
    pytest.importorskip("hnswlib")
    kb = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder(), dense_backend="hnsw")
    _add(kb, "a")
    _add(kb, "b")
    kb.catalogue.record_file("/f/extra.md", "sha-x", "t")  # the graph is linked, not rewritten
    kb.save()
    kb.close()
    again = _open(tmp_path)
    assert again.generation is not None
    assert (again.generation.dir / "hnsw.bin").stat().st_nlink == 2
    query = HashingEmbedder().embed_query("toddlers need sleep")
    assert again.dense_search(query, 1)[0][0] == "b_c0"
    assert _counts(again) == (4, 4, 2, 4)
