"""``kb migrate``: a copy between the embedded store, Qdrant (local mode) and pgvector (a real
PostgreSQL when RAGCHAT_TEST_PGVECTOR_URL is set) that re-embeds nothing, keeps every count,
searches the same, and, interrupted at any point, ends on a re-run with exactly the counts of
one clean run."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import IndexStateError
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.settings import ChunkingSettings, Settings, VectorStoreSettings
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores import migrate as migrate_module
from ragchat.vectorstores.base import WritableKB
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.migrate import migrate

pytest.importorskip("qdrant_client")

from ragchat.vectorstores.qdrant.conn import release
from ragchat.vectorstores.qdrant.kb import QdrantKB

PGVECTOR_URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL")
PGVECTOR = pytest.param(
    "pgvector",
    marks=[
        pytest.mark.integration,
        pytest.mark.skipif(not PGVECTOR_URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set"),
    ],
)
CHUNKING = ChunkingSettings(child_size=120, child_overlap=10, parent_size=300)
TOPICS = ["ibuprofen dosing", "toddler sleep", "fever in babies", "iron tablets", "hay fever"]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    """Qdrant configured (local mode); pgvector reached through the database URL, in a scratch
    schema, so one configuration holds all three stores."""
    settings = Settings(
        data_dir=tmp_path / "data",
        chunking=CHUNKING,
        database_url=PGVECTOR_URL,
        vector_store=VectorStoreSettings(backend="qdrant", pg_schema=f"t_{uuid.uuid4().hex[:12]}"),
    )
    yield settings
    release(settings)
    if PGVECTOR_URL:
        from ragchat.vectorstores.pgvector.conn import drop_schema

        drop_schema(settings)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, topic in enumerate(TOPICS):
        body = " ".join(
            f"Paragraph {j} about {topic}: advice number {j} for {topic} at home." for j in range(8)
        )
        (folder / f"doc{i}.md").write_text(f"# {topic.title()}\n\n{body}\n")
    return folder


def build(settings: Settings, backend: str, docs: Path) -> WritableKB:
    kb = stores.create_kb(settings, "demo", HashingEmbedder(), backend=backend)  # type: ignore[arg-type]
    ingest_paths(kb, [docs], Chunker(CHUNKING))
    return kb


def ranking(found: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(((c, round(s, 4)) for c, s in found), key=lambda x: (-x[1], x[0]))


def snapshot(settings: Settings, backend: str, name: str) -> dict[str, Any]:
    """Everything a copy must keep: counts, chunks, vectors, documents, files, rankings."""
    kb = stores.open_kb(settings, name, HashingEmbedder(), backend=backend)  # type: ignore[arg-type]
    children = sorted(kb.children(), key=lambda c: c.chunk_id)
    ids = [c.chunk_id for c in children]
    vectors = kb.stored_vectors(ids)
    assert vectors is not None
    query = kb.embedder.embed_query("how much sleep does a toddler need")
    info = stores.describe_kb(settings, name, backend=backend).manifest  # type: ignore[arg-type]
    out = {
        "counts": (info.children, info.parents, info.documents, info.files),
        "children": children,
        "parents": sorted(kb.parents(), key=lambda c: c.chunk_id),
        "vectors": vectors,
        "documents": [
            (d.doc_id, d.source, d.file_path, d.n_children) for d in kb.catalogue.documents()
        ],
        "files": sorted(kb.catalogue.files()),
        # Whole rankings (ties broken by id: the stores break them differently).
        "dense": ranking(kb.dense_search(query, 100)),
        "bm25": ranking(kb.bm25_search("toddler sleep advice", 100)),
        "migrating": info.migrating_from,
    }
    kb.close()
    return out


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert np.allclose(a.pop("vectors"), b.pop("vectors"), atol=1e-6)
    assert a == b


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("embedded", "qdrant"),
        ("qdrant", "embedded"),
        pytest.param("embedded", "pgvector", marks=PGVECTOR.marks),
        pytest.param("pgvector", "embedded", marks=PGVECTOR.marks),
        pytest.param("qdrant", "pgvector", marks=PGVECTOR.marks),
    ],
)
def test_a_copy_keeps_everything_and_reembeds_nothing(
    settings: Settings, docs: Path, source: str, target: str
) -> None:
    kb = build(settings, source, docs)
    kb.close()
    report = migrate(settings, "demo", target, new_name="copy", source=source)  # type: ignore[arg-type]
    assert not report.resumed and report.documents == len(TOPICS)
    before, after = snapshot(settings, source, "demo"), snapshot(settings, target, "copy")
    assert after["migrating"] is None and after["counts"] == before["counts"]
    assert report.children == before["counts"][0] > len(TOPICS)
    assert_same(before, after)
    # The files came along: ingesting the same folder into the copy has nothing to do.
    embedder = HashingEmbedder()
    copy = stores.open_kb(settings, "copy", embedder, backend=target)  # type: ignore[arg-type]
    again = ingest_paths(copy, [docs], Chunker(CHUNKING))
    assert (again.unchanged_files, again.documents, embedder.calls) == (len(TOPICS), 0, 0)


def test_round_trip_back_to_the_embedded_store(settings: Settings, docs: Path) -> None:
    build(settings, "embedded", docs).close()
    migrate(settings, "demo", "qdrant")
    migrate(settings, "demo", "embedded", new_name="back")
    assert_same(snapshot(settings, "embedded", "demo"), snapshot(settings, "embedded", "back"))


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("target", ["embedded", "qdrant"])
@pytest.mark.parametrize("where", ["between batches", "inside a batch"])
def test_an_interrupted_copy_resumes_to_the_counts_of_a_clean_one(
    settings: Settings,
    docs: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    where: str,
) -> None:
    source = "qdrant" if target == "embedded" else "embedded"
    build(settings, source, docs).close()
    migrate(settings, "demo", target, new_name="clean", source=source)  # type: ignore[arg-type]
    clean = snapshot(settings, target, "clean")

    monkeypatch.setattr(migrate_module, "_BATCH_CHILDREN", 5)  # one document per batch
    if where == "between batches":

        def stop_after_two(stage: str, done: int, total: int) -> None:
            if 0 < done < total and stop_after_two.batches >= 1:  # type: ignore[attr-defined]
                raise Interrupt
            stop_after_two.batches += 1  # type: ignore[attr-defined]

        stop_after_two.batches = 0  # type: ignore[attr-defined]
        with pytest.raises(Interrupt):
            migrate(
                settings, "demo", target, new_name="resumed", source=source, progress=stop_after_two
            )  # type: ignore[arg-type]
    else:
        # Killed after the second batch's chunks were written but before its save.
        cls: Any = {"embedded": KnowledgeBase, "qdrant": QdrantKB}[target]
        real = cls.add_document_row
        calls = {"n": 0}

        def fail_on_second(self: Any, row: Any) -> None:
            calls["n"] += 1
            if calls["n"] == 2:
                raise Interrupt
            real(self, row)

        monkeypatch.setattr(cls, "add_document_row", fail_on_second)
        with pytest.raises(Interrupt):
            migrate(settings, "demo", target, new_name="resumed", source=source)  # type: ignore[arg-type]
        monkeypatch.setattr(cls, "add_document_row", real)

    assert "resumed" in stores.kb_names(settings, backend=target)  # type: ignore[arg-type]
    report = migrate(settings, "demo", target, new_name="resumed", source=source)  # type: ignore[arg-type]
    resumed = snapshot(settings, target, "resumed")
    assert resumed["counts"] == clean["counts"] and resumed["migrating"] is None
    assert_same(clean, resumed)
    if where == "between batches" or target != "embedded":
        assert report.resumed and report.skipped_documents >= 1


def pg_tables(settings: Settings) -> list[str]:
    import psycopg

    from ragchat.vectorstores.pgvector.conn import database_url

    with psycopg.connect(database_url(settings)) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename ~ '^kb[0-9]+_'",
            [settings.vector_store.pg_schema],
        ).fetchall()
    return sorted(r[0] for r in rows)


@pytest.mark.integration
@pytest.mark.skipif(not PGVECTOR_URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set")
@pytest.mark.parametrize("where", ["while copying", "while building the index"])
def test_an_interrupted_copy_into_pgvector_leaves_nothing(
    settings: Settings, docs: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Loaded in one transaction, the HNSW index built at its end: stopped anywhere, the
    target does not exist (not even its name or tables), and a re-run copies it whole."""
    from ragchat.vectorstores.pgvector import kb as pgvector

    build(settings, "embedded", docs).close()
    migrate(settings, "demo", "pgvector", new_name="clean", source="embedded")
    clean = snapshot(settings, "pgvector", "clean")
    monkeypatch.setattr(migrate_module, "_BATCH_CHILDREN", 5)  # one document per batch
    seen: list[str] = []

    def record(stage: str, done: int, total: int) -> None:
        seen.append(stage)
        if where == "while copying" and stage == "copy" and 0 < done < total:
            raise Interrupt

    def failing_index(self: Any) -> None:
        raise Interrupt

    if where == "while building the index":
        monkeypatch.setattr(pgvector.PgVectorKB, "_build_index", failing_index)
    with pytest.raises(Interrupt):
        migrate(settings, "demo", "pgvector", new_name="again", source="embedded", progress=record)
    assert seen[-1] == ("copy" if where == "while copying" else "index")
    assert stores.kb_names(settings, backend="pgvector") == ["clean"]
    assert len(pg_tables(settings)) == 2  # the clean copy's chunks and terms, nothing else
    monkeypatch.undo()
    report = migrate(settings, "demo", "pgvector", new_name="again", source="embedded")
    assert not report.resumed and report.skipped_documents == 0
    again = snapshot(settings, "pgvector", "again")
    assert again["migrating"] is None
    assert_same(clean, again)


@pytest.mark.integration
@pytest.mark.skipif(not PGVECTOR_URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set")
def test_a_copy_into_pgvector_builds_its_hnsw_index_once_at_the_end(
    settings: Settings, docs: Path
) -> None:
    """The index exists after the copy (a later write keeps it up to date), the postings are
    read without visiting the table, and the dense ranking is the source's."""
    import psycopg

    from ragchat.vectorstores.pgvector.conn import database_url

    build(settings, "embedded", docs).close()
    migrate(settings, "demo", "pgvector", source="embedded")
    with psycopg.connect(database_url(settings)) as conn:
        indexes = [
            r[0]
            for r in conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexdef LIKE %s",
                [settings.vector_store.pg_schema, "%USING hnsw%"],
            ).fetchall()
        ]
        # Loaded frozen: BM25's index-only scans of the postings never visit the table,
        # right after the commit (not only once autovacuum has been round).
        conn.execute(f"SET search_path = {settings.vector_store.pg_schema}")
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")
        terms = next(t for t in pg_tables(settings) if t.endswith("_terms"))
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                f"EXPLAIN (ANALYZE) SELECT tf, dl FROM {terms} WHERE term = 'toddler'"
            ).fetchall()
        )
    assert len(indexes) == 1 and "vector_ip_ops" in indexes[0]
    assert "Index Only Scan" in plan and "Heap Fetches: 0" in plan, plan
    source, target = snapshot(settings, "embedded", "demo"), snapshot(settings, "pgvector", "demo")
    assert target["dense"] == source["dense"] and target["counts"] == source["counts"]


def test_an_existing_knowledge_base_is_never_overwritten(settings: Settings, docs: Path) -> None:
    build(settings, "embedded", docs).close()
    other = stores.create_kb(settings, "demo", HashingEmbedder(), backend="qdrant")
    other.close()
    with pytest.raises(IndexStateError, match="already exists"):
        migrate(settings, "demo", "qdrant")
    assert stores.describe_kb(settings, "demo", backend="qdrant").manifest.children == 0
