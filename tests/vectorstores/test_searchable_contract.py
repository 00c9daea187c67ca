"""The ``SearchableKB`` contract (and its optional capabilities ``ListsChildren`` and
``KeepsVectors``), run over every implementation: a ``KnowledgeBase`` on disk, and the server's
``SharedKB`` proxy, which reads whichever instance the registry has live. Each write goes
through the implementation's own write path and must be visible to the next read."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings, VectorStoreSettings
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores.base import KeepsVectors, ListsChildren, SearchableKB
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.registry import KnowledgeBaseRegistry

Add = Callable[[Sequence[Chunk]], None]


def document(doc_id: str, texts: Sequence[str], **meta: object) -> list[Chunk]:
    """A parent passage and its children, in order."""
    md = {"source": f"{doc_id}.md", **meta}
    parent = Chunk(f"{doc_id}_P", doc_id, " ".join(texts), 0, None, True, md)
    children = [
        Chunk(f"{doc_id}_c{i}", doc_id, text, i, parent.chunk_id, False, md)
        for i, text in enumerate(texts)
    ]
    return [parent, *children]


DRUG = document(
    "drug",
    ["ibuprofen relieves pain", "take ibuprofen with food", "stomach upset is a side effect"],
    chapter="1",
)
SLEEP = document(
    "sleep", ["toddlers need eleven hours of sleep", "naps shorten with age"], chapter="2"
)
CHILDREN = [c.chunk_id for c in DRUG + SLEEP if not c.is_parent]


class SearchableKBContract:
    """Subclasses provide ``searchable`` (named "demo", holding ``DRUG`` and ``SLEEP``) and
    ``add``, which writes chunks through the implementation's write path."""

    @pytest.fixture
    def searchable(self, tmp_path: Path) -> SearchableKB:
        raise NotImplementedError

    @pytest.fixture
    def add(self, searchable: SearchableKB) -> Add:
        raise NotImplementedError

    def test_offers_the_protocol_and_both_capabilities(self, searchable: SearchableKB) -> None:
        assert isinstance(searchable, SearchableKB)
        assert isinstance(searchable, ListsChildren) and isinstance(searchable, KeepsVectors)
        assert searchable.name == "demo" and searchable.embedder.dim > 0
        assert searchable.child_count() == len(CHILDREN)

    def test_dense_search_returns_children_best_first(self, searchable: SearchableKB) -> None:
        query = searchable.embedder.embed_query("take ibuprofen with food")
        found = searchable.dense_search(query, 3)
        assert len(found) == 3 and found[0][0] == "drug_c1"
        scores = [score for _, score in found]
        assert scores == sorted(scores, reverse=True)
        assert {cid for cid, _ in searchable.dense_search(query, 50)} == set(CHILDREN)

    def test_bm25_search_returns_matching_children_best_first(
        self, searchable: SearchableKB
    ) -> None:
        found = searchable.bm25_search("ibuprofen food", 5)
        assert found[0][0] == "drug_c1" and {cid for cid, _ in found} <= set(CHILDREN)
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
        assert searchable.bm25_search("zebra", 5) == []

    def test_filters_include_and_exclude(self, searchable: SearchableKB) -> None:
        query = searchable.embedder.embed_query("sleep and ibuprofen")
        for search in (
            lambda f: searchable.dense_search(query, 10, f),
            lambda f: searchable.bm25_search("sleep ibuprofen naps food", 10, f),
        ):
            assert {c for c, _ in search({"doc_id": "sleep"})} <= {"sleep_c0", "sleep_c1"}
            assert all(c.startswith("drug") for c, _ in search({"chapter": "1"}))
            excluded = search({"doc_id": Exclude(("drug",))})
            assert excluded and all(c.startswith("sleep") for c, _ in excluded)
            assert search({"doc_id": "sleep", "chapter": "1"}) == []

    def test_scores_of_given_chunks_in_the_order_asked(self, searchable: SearchableKB) -> None:
        query = searchable.embedder.embed_query("stomach upset")
        ids = ["drug_c2", "no-such-chunk", "sleep_c0"]
        dense = searchable.dense_scores(query, ids)
        searched = dict(searchable.dense_search(query, 10))
        assert dense[0] == pytest.approx(searched["drug_c2"], abs=1e-5) and dense[1] == 0.0
        bm25 = searchable.bm25_scores("stomach upset", ids)
        assert bm25[0] > 0 and bm25[1] == 0.0 and bm25[2] == 0.0

    def test_chunks_by_id_in_order_unknown_ones_skipped(self, searchable: SearchableKB) -> None:
        got = searchable.get_chunks(["sleep_c1", "nope", "drug_P", "drug_c0"])
        assert [c.chunk_id for c in got] == ["sleep_c1", "drug_P", "drug_c0"]
        assert got[1].is_parent and got[2].parent_id == "drug_P"
        assert got[0].metadata["chapter"] == "2"

    def test_neighbours_within_a_document(self, searchable: SearchableKB) -> None:
        middle = searchable.get_chunks(["drug_c1"])[0]
        after = searchable.neighbour(middle, 1)
        before = searchable.neighbour(middle, -1)
        assert after is not None and after.chunk_id == "drug_c2"
        assert before is not None and before.chunk_id == "drug_c0"
        assert searchable.neighbour(middle, 2) is None  # past the end: not another document

    def test_children_and_their_stored_vectors(self, searchable: SearchableKB) -> None:
        assert isinstance(searchable, ListsChildren) and isinstance(searchable, KeepsVectors)
        assert sorted(c.chunk_id for c in searchable.children()) == sorted(CHILDREN)
        vectors = searchable.stored_vectors(["sleep_c0", "drug_c2"])
        assert vectors is not None and vectors.shape == (2, searchable.embedder.dim)
        expected = searchable.embedder.embed_documents(
            ["toddlers need eleven hours of sleep", "stomach upset is a side effect"]
        )
        assert np.allclose(vectors, expected, atol=1e-5)
        assert searchable.stored_vectors(["sleep_c0", "nope"]) is None

    def test_a_write_is_seen_by_the_next_read(self, searchable: SearchableKB, add: Add) -> None:
        assert isinstance(searchable, ListsChildren)
        before = searchable.version()
        add(document("cold", ["a cold lasts about a week", "rest and fluids help"]))
        assert searchable.child_count() == len(CHILDREN) + 2
        assert searchable.version() != before
        assert searchable.bm25_search("cold week", 1)[0][0] == "cold_c0"
        query = searchable.embedder.embed_query("rest and fluids help")
        assert searchable.dense_search(query, 1)[0][0] == "cold_c1"


class TestKnowledgeBase(SearchableKBContract):
    @pytest.fixture
    def searchable(self, tmp_path: Path) -> SearchableKB:
        kb = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder())
        kb.add_chunks(DRUG)
        kb.add_chunks(SLEEP)
        return kb

    @pytest.fixture
    def add(self, searchable: SearchableKB) -> Add:
        assert isinstance(searchable, KnowledgeBase)

        def write(chunks: Sequence[Chunk]) -> None:
            searchable.add_chunks(chunks)

        return write


class TestRegistryProxy(SearchableKBContract):
    @pytest.fixture
    def registry(self, tmp_path: Path) -> KnowledgeBaseRegistry:
        registry = KnowledgeBaseRegistry(tmp_path, HashingEmbedder())
        with registry.writing("demo", create=True) as kb:
            kb.add_chunks(DRUG)
            kb.add_chunks(SLEEP)
        return registry

    @pytest.fixture
    def searchable(self, registry: KnowledgeBaseRegistry) -> SearchableKB:
        return registry.open("demo")

    @pytest.fixture
    def add(self, registry: KnowledgeBaseRegistry) -> Add:
        def write(chunks: Sequence[Chunk]) -> None:
            with registry.writing("demo") as kb:  # a private instance, swapped in on success
                kb.add_chunks(chunks)

        return write


class TestQdrantKB(SearchableKBContract):
    """qdrant-client's local mode: the same client API as a server, on disk, no server."""

    @pytest.fixture
    def searchable(self, tmp_path: Path) -> Iterator[SearchableKB]:
        pytest.importorskip("qdrant_client")
        from ragchat.vectorstores.qdrant.conn import release
        from ragchat.vectorstores.qdrant.kb import QdrantKB

        settings = Settings(data_dir=tmp_path, vector_store=VectorStoreSettings(backend="qdrant"))
        kb = QdrantKB.create(settings, "demo", HashingEmbedder())
        kb.add_chunks(DRUG)
        kb.add_chunks(SLEEP)
        yield kb
        release(settings)

    @pytest.fixture
    def add(self, searchable: SearchableKB) -> Add:
        def write(chunks: Sequence[Chunk]) -> None:
            searchable.add_chunks(chunks)  # type: ignore[attr-defined]

        return write


@pytest.mark.integration
class TestPgVectorKB(SearchableKBContract):
    """A real PostgreSQL with pgvector (RAGCHAT_TEST_PGVECTOR_URL), a scratch schema each."""

    @pytest.fixture
    def searchable(self, tmp_path: Path) -> Iterator[SearchableKB]:
        url = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL")
        if not url:
            pytest.skip("RAGCHAT_TEST_PGVECTOR_URL is not set (scripts/pgvector start prints one)")
        from ragchat.vectorstores.pgvector.conn import drop_schema
        from ragchat.vectorstores.pgvector.kb import PgVectorKB

        vs = VectorStoreSettings(
            backend="pgvector", url=url, pg_schema=f"t_{uuid.uuid4().hex[:12]}"
        )
        settings = Settings(data_dir=tmp_path, vector_store=vs)
        kb = PgVectorKB.create(settings, "demo", HashingEmbedder())
        kb.add_chunks(DRUG)
        kb.add_chunks(SLEEP)
        yield kb
        kb.close()
        drop_schema(settings)

    @pytest.fixture
    def add(self, searchable: SearchableKB) -> Add:
        def write(chunks: Sequence[Chunk]) -> None:
            searchable.add_chunks(chunks)  # type: ignore[attr-defined]

        return write
