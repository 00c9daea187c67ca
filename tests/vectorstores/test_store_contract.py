"""One contract for every vector store a knowledge base can live in (``index.stores``): the
embedded files, Qdrant (qdrant-client's local mode, and a real server when
RAGCHAT_TEST_QDRANT_URL is set) and pgvector (a real PostgreSQL: RAGCHAT_TEST_PGVECTOR_URL,
which ``scripts/pgvector start`` prints). Everything goes through the write path users take:
ingest files, re-ingest, replace a changed file, remove one, then search, filter and expand."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import IngestReport, ingest_paths, remove_paths
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.settings import ChunkingSettings, RetrievalSettings, Settings, VectorStoreSettings
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import SearchesHybrid, WritableKB

CHUNKING = ChunkingSettings(child_size=160, child_overlap=20, parent_size=400)

IBUPROFEN = """---
title: Ibuprofen
chapter: 1
---
# Ibuprofen
## Uses
Ibuprofen relieves pain and fever. It also reduces inflammation of joints and muscles after
sport, and it helps with period pain and headaches in adults and older children.
## Dosing
Adults take 200 to 400 mg every four to six hours. Never take more than 1,200 mg a day
without a doctor's advice, and always take ibuprofen with food or milk.
## Side effects
Stomach upset is the most common side effect. Heartburn, nausea and bloating also happen.
Stop and see a doctor if you notice black stools or vomit blood.
"""

SLEEP = """---
title: Toddler sleep
chapter: 2
---
# Toddler sleep
Toddlers need eleven to fourteen hours of sleep a day, naps included. A regular bedtime
routine with a bath, a story and a song helps them settle. Naps shorten with age and most
children drop the last nap between three and five years old.
"""

PRIVATE = """# My lab results
My ferritin was 9 ng/mL in March, far below the range; the doctor prescribed iron tablets
for three months and a new blood test in June.
"""


SERVER_URL = os.environ.get("RAGCHAT_TEST_QDRANT_URL")
PGVECTOR_URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL")


def pgvector_settings(**values: object) -> VectorStoreSettings:
    """A scratch schema of RAGCHAT_TEST_PGVECTOR_URL's database (``drop_store`` drops it)."""
    if not PGVECTOR_URL:
        pytest.skip("RAGCHAT_TEST_PGVECTOR_URL is not set (scripts/pgvector start prints one)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    return VectorStoreSettings.model_validate(
        {"backend": "pgvector", "url": PGVECTOR_URL, "pg_schema": schema, **values}
    )


def store_settings(kind: str, data_dir: Path) -> Settings:
    """``embedded``, ``qdrant`` (local mode in ``data_dir``), ``qdrant-server``
    (RAGCHAT_TEST_QDRANT_URL, collections under a prefix of their own) or ``pgvector``
    (RAGCHAT_TEST_PGVECTOR_URL, a schema of its own)."""
    if kind == "embedded":
        vs = VectorStoreSettings()
    elif kind == "pgvector":
        vs = pgvector_settings()
    else:
        pytest.importorskip("qdrant_client")
        vs = VectorStoreSettings(backend="qdrant")
        if kind == "qdrant-server":
            if not SERVER_URL:
                pytest.skip("RAGCHAT_TEST_QDRANT_URL is not set: no Qdrant server to test against")
            prefix = f"ragchat_test_{uuid.uuid4().hex[:10]}_"
            vs = VectorStoreSettings(backend="qdrant", url=SERVER_URL, collection_prefix=prefix)
    return Settings(data_dir=data_dir, chunking=CHUNKING, vector_store=vs)


def drop_store(settings: Settings) -> None:
    if settings.vector_store.backend == "pgvector":
        from ragchat.vectorstores.pgvector.conn import drop_schema

        drop_schema(settings)
        return
    if settings.vector_store.backend != "qdrant":
        return
    from ragchat.vectorstores.qdrant.conn import connect, release

    if settings.vector_store.url:
        client = connect(settings)
        for c in client.get_collections().collections:
            if c.name.startswith(settings.vector_store.collection_prefix):
                client.delete_collection(c.name)
    release(settings)  # local mode locks its folder until the client is closed


BACKENDS = [
    "embedded",
    "qdrant",
    pytest.param("qdrant-server", marks=pytest.mark.integration),
    pytest.param("pgvector", marks=pytest.mark.integration),
]


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    settings = store_settings(request.param, tmp_path / "data")
    yield settings
    drop_store(settings)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ibuprofen.md").write_text(IBUPROFEN)
    (folder / "sleep.md").write_text(SLEEP)
    return folder


@pytest.fixture
def kb(settings: Settings) -> WritableKB:
    return stores.open_or_create_kb(settings, "demo", HashingEmbedder())


def ingest(kb: WritableKB, *paths: Path) -> IngestReport:
    return ingest_paths(kb, list(paths), Chunker(CHUNKING))


def counts(settings: Settings, kb: WritableKB) -> tuple[int, int, int, int]:
    """(children, parents, documents, files) from the stored manifest, checked against the
    knowledge base's live figures."""
    info = stores.describe_kb(settings, kb.name).manifest
    assert info.children == kb.child_count() == len(kb.children())
    assert info.parents == len(kb.parents())
    assert info.documents == len(kb.catalogue.documents())
    return info.children, info.parents, info.documents, info.files


def doc_id_of(kb: WritableKB, name: str) -> str:
    return next(d.doc_id for d in kb.catalogue.documents() if d.source.endswith(name))


def retriever(kb: WritableKB, **config: object) -> KBRetriever:
    base = {"rerank": False, "parents": False, "gate_threshold": None}
    return KBRetriever(kb, RetrievalSettings.model_validate({**base, **config}))


def test_ingest_stores_children_parents_documents_and_files(
    settings: Settings, kb: WritableKB, docs: Path
) -> None:
    report = ingest(kb, docs)
    assert (report.added_files, report.documents) == (2, 2)
    children, parents, documents, files = counts(settings, kb)
    assert (children, parents, documents, files) == (report.children, report.parents, 2, 2)
    assert children > 4 and parents >= 2
    assert stores.kb_names(settings) == ["demo"]
    reopened = stores.open_kb(settings, "demo", HashingEmbedder())
    assert reopened.child_count() == children


def test_reingesting_the_same_files_is_a_no_op(
    settings: Settings, kb: WritableKB, docs: Path
) -> None:
    ingest(kb, docs)
    before, version = counts(settings, kb), kb.version()
    calls = kb.embedder.calls  # type: ignore[attr-defined]
    again = ingest(kb, docs)
    assert (again.unchanged_files, again.documents, again.children) == (2, 0, 0)
    assert kb.embedder.calls == calls  # type: ignore[attr-defined]
    assert counts(settings, kb) == before and kb.version() == version


def test_a_changed_file_replaces_its_document(
    settings: Settings, kb: WritableKB, docs: Path
) -> None:
    ingest(kb, docs)
    old_doc = doc_id_of(kb, "sleep.md")
    old_ids = [c.chunk_id for c in kb.children() if c.doc_id == old_doc]
    (docs / "sleep.md").write_text(SLEEP.replace("eleven to fourteen", "twelve to thirteen"))
    report = ingest(kb, docs)
    assert (report.replaced_files, report.removed_documents, report.documents) == (1, 1, 1)
    assert kb.get_chunks(old_ids) == []
    new_doc = doc_id_of(kb, "sleep.md")
    assert new_doc != old_doc and not kb.catalogue.has_document(old_doc)
    assert counts(settings, kb)[2:] == (2, 2)
    found = kb.bm25_search("twelve thirteen hours", 3)
    assert found and kb.get_chunks([found[0][0]])[0].doc_id == new_doc


def test_removing_a_file_deletes_its_chunks(settings: Settings, kb: WritableKB, docs: Path) -> None:
    ingest(kb, docs)
    gone = doc_id_of(kb, "ibuprofen.md")
    kept_children = sum(c.doc_id != gone for c in kb.children())
    assert remove_paths(kb, [str(docs / "ibuprofen.md")]) == 1
    assert counts(settings, kb) == (kept_children, counts(settings, kb)[1], 1, 1)
    assert all(c.doc_id != gone for c in kb.children() + kb.parents())
    assert kb.bm25_search("ibuprofen", 5) == []
    query = kb.embedder.embed_query("Adults take 200 to 400 mg every four to six hours")
    assert all(kb.get_chunks([c])[0].doc_id != gone for c, _ in kb.dense_search(query, 10))


def test_filters_by_document_metadata_and_exclusion(kb: WritableKB, docs: Path) -> None:
    ingest(kb, docs)
    ibu, sleep = doc_id_of(kb, "ibuprofen.md"), doc_id_of(kb, "sleep.md")
    query = kb.embedder.embed_query("sleep hours and ibuprofen dose")
    text = "sleep ibuprofen hours dose naps stomach"

    def docs_found(filters: dict[str, object]) -> set[str]:
        ids = [c for c, _ in kb.dense_search(query, 50, filters)]
        ids += [c for c, _ in kb.bm25_search(text, 50, filters)]
        return {c.doc_id for c in kb.get_chunks(ids)}

    assert docs_found({}) == {ibu, sleep}
    assert docs_found({"doc_id": sleep}) == {sleep}
    assert docs_found({"chapter": "1"}) == {ibu}
    assert docs_found({"chapter": 1}) == {ibu}  # compared as text, as the embedded store does
    assert docs_found({"chapter": ["1", "2"]}) == {ibu, sleep}
    assert docs_found({"source": str(docs / "sleep.md")}) <= {sleep}
    assert docs_found({"doc_id": Exclude((ibu,))}) == {sleep}
    assert docs_found({"doc_id": ibu, "chapter": "2"}) == set()


def test_children_resolve_to_their_parents(kb: WritableKB, docs: Path) -> None:
    ingest(kb, docs)
    children = kb.children()
    parent_ids = {c.parent_id for c in children}
    parents = {p.chunk_id: p for p in kb.get_chunks([p for p in parent_ids if p])}
    assert parents and set(parents) == {p.chunk_id for p in kb.parents()}
    for child in children:
        parent = parents[child.parent_id or ""]
        assert parent.is_parent and parent.doc_id == child.doc_id
        assert child.text[:40] in parent.text
    found = retriever(kb, parents=True, top_k=2).retrieve("how much ibuprofen per day")
    assert found.hits and all(h.context_ids[0] in parents for h in found.hits)


def test_neighbours_follow_document_order(kb: WritableKB, docs: Path) -> None:
    ingest(kb, docs)
    doc = doc_id_of(kb, "ibuprofen.md")
    ordered = sorted((c for c in kb.children() if c.doc_id == doc), key=lambda c: c.position)
    assert len(ordered) >= 3
    middle = ordered[1]
    after, before = kb.neighbour(middle, 1), kb.neighbour(middle, -1)
    assert after is not None and after.chunk_id == ordered[2].chunk_id
    assert before is not None and before.chunk_id == ordered[0].chunk_id
    assert kb.neighbour(ordered[-1], 1) is None and kb.neighbour(ordered[0], -1) is None


@pytest.mark.parametrize("fusion", ["minmax", "rrf"])
def test_a_private_upload_never_reaches_other_users(
    kb: WritableKB, docs: Path, tmp_path: Path, fusion: str
) -> None:
    ingest(kb, docs)
    upload = tmp_path / "uploads"
    upload.mkdir()
    (upload / "labs.md").write_text(PRIVATE)
    ingest(kb, upload)
    private = doc_id_of(kb, "labs.md")
    question = "what was my ferritin in March and which iron tablets"
    search = retriever(kb, mode="hybrid", fusion=fusion, top_k=5, neighbours=True)
    owner = search.retrieve(question)
    assert owner.hits[0].chunk.doc_id == private
    other = search.retrieve(question, filters={"doc_id": Exclude((private,))})
    assert other.hits and all(h.chunk.doc_id != private for h in other.hits)
    assert all(private not in "".join(h.context_ids) for h in other.hits)


def test_hybrid_ranking_matches_across_backends(tmp_path: Path, docs: Path) -> None:
    """The same files ingested in one batch rank the same on every store: the sparse vectors
    with Qdrant's IDF, and pgvector's BM25 over stored term counts, give the embedded BM25's
    scores, and fusion is the same code."""
    ranked = {}
    for backend in ("embedded", "qdrant", *(("pgvector",) if PGVECTOR_URL else ())):
        settings = store_settings(backend, tmp_path / backend)
        kb = stores.open_or_create_kb(settings, "demo", HashingEmbedder())
        ingest(kb, docs)
        if backend == "qdrant":
            assert isinstance(kb, SearchesHybrid)
        bm25 = kb.bm25_search("ibuprofen stomach food", 5)
        hybrid = retriever(kb, mode="hybrid", top_k=5).retrieve("ibuprofen with food")
        # RRF fused by Qdrant itself must give ragchat's scores (its ranks start at 0).
        rrf = retriever(kb, mode="hybrid", fusion="rrf", top_k=50).retrieve("ibuprofen food")
        ranked[backend] = (
            bm25,
            [(h.chunk.chunk_id, round(h.score, 4)) for h in hybrid.hits],
            sorted((round(h.score, 6), h.chunk.chunk_id) for h in rrf.hits),
        )
        kb.close()
        drop_store(settings)
    bm25_e, hybrid_e, rrf_e = ranked.pop("embedded")
    for bm25_q, hybrid_q, rrf_q in ranked.values():
        assert [c for c, _ in bm25_e] == [c for c, _ in bm25_q]
        assert [s for _, s in bm25_e] == pytest.approx([s for _, s in bm25_q], rel=1e-4)
        assert hybrid_e == hybrid_q
        assert rrf_e == rrf_q and len(rrf_e) > 5


def test_a_write_killed_between_its_chunks_and_documents_leaves_a_recoverable_state(
    settings: Settings, kb: WritableKB, docs: Path
) -> None:
    """Embedded and pgvector: nothing of an uncommitted write survives. Qdrant (no
    transactions): the chunk points stay, ``kb check`` names them and ``kb repair`` drops them;
    a re-ingest works."""
    ingest(kb, docs / "ibuprofen.md")
    clean = counts(settings, kb)
    kb.add_chunks([Chunk("lost_c0", "lost", "an unfinished write", 0, None, False, {})], save=False)
    kb.close()
    if settings.vector_store.backend == "qdrant":
        report = stores.check_kb(settings, "demo")
        assert any("no document row" in p for p in report.problems)
        assert any("dropped the chunks of 1" in d for d in stores.repair_kb(settings, "demo"))
    assert stores.check_kb(settings, "demo").ok
    again = stores.open_kb(settings, "demo", HashingEmbedder())
    assert counts(settings, again) == clean
    ingest(again, docs / "sleep.md")
    assert counts(settings, again)[0] > clean[0]
