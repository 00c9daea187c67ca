"""What only the pgvector store has to show beyond the shared contract suites: a write killed
right before its commit leaves nothing behind, filtered dense search answers exactly whichever
plan it takes, and ``kb check``/``kb repair`` find and fix damaged statistics. Runs against a
real PostgreSQL with pgvector (RAGCHAT_TEST_PGVECTOR_URL: ``scripts/pgvector start``)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.embed.stored import StoredVectorsOnly
from ragchat.settings import Settings, VectorStoreSettings
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import DocumentRow

URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set (scripts/pgvector)"),
]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    vs = VectorStoreSettings(backend="pgvector", url=URL, pg_schema=schema)
    settings = Settings(data_dir=tmp_path / "data", vector_store=vs)
    yield settings
    from ragchat.vectorstores.pgvector.conn import drop_schema

    drop_schema(settings)


def env_for(settings: Settings) -> dict[str, str]:
    vs = settings.vector_store
    return {
        **os.environ,
        "RAGCHAT_DATA_DIR": str(settings.data_dir),
        "RAGCHAT_VECTOR_STORE__BACKEND": "pgvector",
        "RAGCHAT_VECTOR_STORE__URL": str(vs.url),
        "RAGCHAT_VECTOR_STORE__PG_SCHEMA": vs.pg_schema,
    }


def ingest(settings: Settings, folder: Path, crash_at: str | None = None) -> int:
    env = env_for(settings)
    if crash_at:
        env["RAGCHAT_CRASH_AT"] = crash_at
    code = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"
    done = subprocess.run(
        [sys.executable, "-c", code, "ingest", str(folder), "--kb", "notes"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode in (0, -9), done.stderr[-2000:]
    return done.returncode


def test_an_ingestion_killed_before_its_commit_leaves_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "a.md").write_text("# Alpha\nAlpha particles are helium nuclei.\n")
    (second / "b.md").write_text("# Beta\nBeta decay emits an electron and a neutrino.\n")
    assert ingest(settings, first) == 0
    before = stores.describe_kb(settings, "notes").manifest
    assert ingest(settings, second, crash_at="pg.before_commit") == -9
    after = stores.describe_kb(settings, "notes").manifest
    assert (after.children, after.documents, after.files) == (
        before.children,
        before.documents,
        before.files,
    )
    assert stores.check_kb(settings, "notes").ok
    reader = StoredVectorsOnly(after.embedding_model, after.dim)
    kb = stores.open_kb(settings, "notes", reader)
    assert kb.bm25_search("neutrino", 5) == []
    kb.close()
    assert ingest(settings, second) == 0  # the re-run is clean: the file was never recorded
    kb = stores.open_kb(settings, "notes", reader)
    assert kb.bm25_search("neutrino", 5) and len(kb.catalogue.files()) == 2
    kb.close()


def many_documents(n_docs: int, per_doc: int) -> list[Chunk]:
    words = [
        "pain",
        "fever",
        "sleep",
        "iron",
        "dose",
        "stomach",
        "child",
        "heart",
        "blood",
        "kidney",
    ]
    rng = np.random.default_rng(3)
    return [
        Chunk(
            f"d{d}_c{i}",
            f"d{d}",
            " ".join(rng.choice(words, size=8)),
            i,
            None,
            False,
            {"group": str(d % 7)},
        )
        for d in range(n_docs)
        for i in range(per_doc)
    ]


@pytest.mark.parametrize("exact_below", [0, 10_000])
def test_filtered_dense_search_is_exact_whichever_plan_answers(
    settings: Settings, exact_below: int
) -> None:
    """``exact_below`` 0: every filter walks the HNSW graph (iterative scan); 10,000: these
    filters are answered by an exact scan. Both must give the exact top k of the rows that
    pass the filter, however few they are."""
    settings.vector_store.exact_below = exact_below
    kb = stores.create_kb(settings, "many", HashingEmbedder())
    chunks = many_documents(200, 5)
    kb.add_chunks(chunks)
    vectors = kb.stored_vectors([c.chunk_id for c in chunks])
    assert vectors is not None
    query = kb.embedder.embed_query("iron dose for a child")
    scores = vectors @ query
    for flt, allowed in (
        ({"doc_id": "d17"}, {c.chunk_id for c in chunks if c.doc_id == "d17"}),
        ({"group": "3"}, {c.chunk_id for c in chunks if c.metadata["group"] == "3"}),
        (
            {"doc_id": Exclude(tuple(f"d{d}" for d in range(199)))},
            {c.chunk_id for c in chunks if c.doc_id == "d199"},
        ),
    ):
        k = 10
        order = [i for i in np.argsort(-scores) if chunks[i].chunk_id in allowed][:k]
        found = kb.dense_search(query, k, flt)
        assert [c for c, _ in found] == [chunks[i].chunk_id for i in order]
    kb.close()


def test_check_finds_damaged_statistics_and_repair_fixes_them(settings: Settings) -> None:
    from ragchat.vectorstores.pgvector.conn import pool

    kb = stores.create_kb(settings, "notes", HashingEmbedder())
    kb.add_chunks(many_documents(3, 4), save=False)
    for d in range(3):
        kb.add_document_row(DocumentRow(f"d{d}", f"d{d}.md", "md", "", None, 4, 1, {}, "now"))
    kb.save()
    kb.close()
    assert stores.check_kb(settings, "notes").ok
    with pool(settings).connection() as conn:
        conn.execute(
            "UPDATE kbs SET n_children = n_children + 5, total_len = 1 WHERE name = 'notes'"
        )
    report = stores.check_kb(settings, "notes")
    assert any("BM25 statistics" in p for p in report.problems)
    done = stores.repair_kb(settings, "notes")
    assert any("re-derived" in line for line in done)
    assert stores.check_kb(settings, "notes").ok
    stores.delete_kb(settings, "notes")
    assert stores.kb_names(settings) == []
    with pool(settings).connection() as conn:
        left = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s",
            [settings.vector_store.pg_schema],
        ).fetchone()
    assert left is not None and left[0] == 3  # kbs, documents, files: no knowledge base's tables
