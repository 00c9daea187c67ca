"""``ragchat kb migrate`` killed with SIGKILL (``Settings.crash_at``) at each point of a copy,
both ways between the embedded store and Qdrant's local mode: the re-run ends with exactly what
one clean run leaves (counts, chunks, vectors, documents, files, and no orphan points or
vectors), and the source is untouched. Into pgvector (one transaction): nothing at all until
the commit, then the whole copy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.settings import ChunkingSettings, Settings, VectorStoreSettings
from ragchat.vectorstores import factory as stores

pytest.importorskip("qdrant_client")

from ragchat.vectorstores.qdrant.conn import release
from ragchat.vectorstores.qdrant.kb import QdrantKB

pytestmark = pytest.mark.slow

CHUNKING = ChunkingSettings(child_size=120, child_overlap=10, parent_size=300)
DOCS = 12  # ~100 children each: three batches of >= 512 children (migrate._BATCH_CHILDREN)
# Where the copy is killed: before anything is copied, inside the second batch (chunks
# written, then document rows, not yet saved), after it is saved, and after the last batch
# with the target still marked as migrating.
POINTS = [
    "migrate.target_ready",
    "migrate.chunks_written#2",
    "migrate.rows_written#2",
    "migrate.batch_saved#2",
    "migrate.copied",
]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    settings = Settings(
        data_dir=tmp_path / "data",
        chunking=CHUNKING,
        vector_store=VectorStoreSettings(backend="qdrant"),
    )
    yield settings
    release(settings)


def build_source(settings: Settings, backend: str, folder: Path) -> None:
    folder.mkdir()
    for i in range(DOCS):
        body = " ".join(
            f"Paragraph {j} of leaflet {i}: advice number {j} about topic {i} at home."
            for j in range(160)
        )
        (folder / f"leaflet{i}.md").write_text(f"# Leaflet {i}\n\n{body}\n")
    kb = stores.create_kb(settings, "demo", HashingEmbedder(), backend=backend)  # type: ignore[arg-type]
    ingest_paths(kb, [folder], Chunker(CHUNKING))
    kb.close()
    release(settings)  # the CLI's process takes Qdrant's local-mode lock


def run_migrate(settings: Settings, to: str, name: str, crash: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")}
    env.update(RAGCHAT_DATA_DIR=str(settings.data_dir), COLUMNS="200")
    if settings.database_url:  # pgvector's database and scratch schema
        env.update(
            RAGCHAT_DATABASE_URL=settings.database_url,
            RAGCHAT_VECTOR_STORE__PG_SCHEMA=settings.vector_store.pg_schema,
        )
    if crash:
        env["RAGCHAT_CRASH_AT"] = crash
    code = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"
    args = ["kb", "migrate", "demo", "--to", to, "--name", name]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env
    )
    if done.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"migrate {args} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.returncode


def snapshot(settings: Settings, backend: str, name: str) -> dict[str, Any]:
    """What a copy must hold, and what it must not: the raw number of vectors or points."""
    kb = stores.open_kb(settings, name, HashingEmbedder(), backend=backend)  # type: ignore[arg-type]
    try:
        children = sorted(c.chunk_id for c in kb.children())
        vectors = kb.stored_vectors(children)
        info = stores.describe_kb(settings, name, backend=backend).manifest  # type: ignore[arg-type]
        if isinstance(kb, QdrantKB):
            raw = kb._client.count(kb.collection, exact=True).count
        elif backend == "pgvector":  # rows of its chunks (children and parents) and postings
            with kb._session.read() as conn:  # type: ignore[attr-defined]
                raw = tuple(
                    conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                    for table in (kb._chunks, kb._terms)  # type: ignore[attr-defined]
                )
        else:
            raw = (len(kb.dense), len(kb.bm25), kb.catalogue.count(parents=False))  # type: ignore[attr-defined]
        return {
            "counts": (info.children, info.parents, info.documents, info.files),
            "children": children,
            "parents": sorted(c.chunk_id for c in kb.parents()),
            "documents": sorted(
                (d.doc_id, d.source, d.file_path, d.n_children) for d in kb.catalogue.documents()
            ),
            "files": sorted(kb.catalogue.files()),
            "raw": raw,
            "migrating": info.migrating_from,
            "vectors": vectors,
        }
    finally:
        kb.close()
        release(settings)


def pg_tables(settings: Settings) -> list[str]:
    import psycopg

    from ragchat.vectorstores.pgvector.conn import database_url

    with psycopg.connect(database_url(settings)) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename ~ '^kb[0-9]+_'",
            [settings.vector_store.pg_schema],
        ).fetchall()
    return sorted(r[0] for r in rows)


@pytest.mark.parametrize("target", ["qdrant", "embedded"])
def test_a_migration_killed_anywhere_reruns_to_the_counts_of_one_clean_run(
    settings: Settings, tmp_path: Path, target: str
) -> None:
    source = "embedded" if target == "qdrant" else "qdrant"
    build_source(settings, source, tmp_path / "docs")
    before = snapshot(settings, source, "demo")
    assert before["counts"][0] > 2 * 512  # the copy takes several batches

    assert run_migrate(settings, target, "clean", None) == 0
    clean = snapshot(settings, target, "clean")
    assert clean["counts"] == before["counts"] and clean["migrating"] is None

    for i, point in enumerate(POINTS):
        name = f"killed{i}"
        assert run_migrate(settings, target, name, point) == -signal.SIGKILL, point
        assert run_migrate(settings, target, name, None) == 0, point
        again = snapshot(settings, target, name)
        vectors = again.pop("vectors")
        assert again == {k: v for k, v in clean.items() if k != "vectors"}, point
        assert np.allclose(vectors, clean["vectors"], atol=1e-6), point

    after = snapshot(settings, source, "demo")
    assert np.allclose(after.pop("vectors"), before.pop("vectors"))
    assert after == before


PGVECTOR_URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL")
# Into pgvector the copy is one transaction: killed anywhere up to its commit, the target does
# not exist at all; the last point is after the commit.
PG_POINTS = [
    "migrate.target_ready",
    "migrate.chunks_written#2",
    "migrate.rows_written#2",
    "migrate.copied",
    "pg.index_built",
    "pg.before_commit",
]


@pytest.mark.integration
@pytest.mark.skipif(not PGVECTOR_URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set")
def test_a_migration_into_pgvector_killed_anywhere_leaves_nothing_or_everything(
    tmp_path: Path,
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        chunking=CHUNKING,
        database_url=PGVECTOR_URL,
        vector_store=VectorStoreSettings(pg_schema=f"t_{uuid.uuid4().hex[:12]}"),
    )
    try:
        build_source(settings, "embedded", tmp_path / "docs")
        before = snapshot(settings, "embedded", "demo")
        assert run_migrate(settings, "pgvector", "clean", None) == 0
        clean = snapshot(settings, "pgvector", "clean")
        assert clean["counts"] == before["counts"] and clean["migrating"] is None
        tables = pg_tables(settings)
        for i, point in enumerate(PG_POINTS):
            name = f"killed{i}"
            assert run_migrate(settings, "pgvector", name, point) == -signal.SIGKILL, point
            assert stores.kb_names(settings, backend="pgvector") == ["clean"], point
            assert pg_tables(settings) == tables, point  # not even empty tables are left
            release(settings)
            assert run_migrate(settings, "pgvector", name, None) == 0, point
            again = snapshot(settings, "pgvector", name)
            vectors = again.pop("vectors")
            assert again == {k: v for k, v in clean.items() if k != "vectors"}, point
            assert np.allclose(vectors, clean["vectors"], atol=1e-6), point
            stores.delete_kb(settings, name, backend="pgvector")
        after = snapshot(settings, "embedded", "demo")
        assert np.allclose(after.pop("vectors"), before.pop("vectors"))
        assert after == before
    finally:
        from ragchat.vectorstores.pgvector.conn import drop_schema

        drop_schema(settings)
