"""The registry's live proxy (``SharedKB``) offers what retrieval needs beyond the protocol —
chunk listing for the title signal, stored vectors for feedback — and follows each write."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragchat.api.services.kbs import KnowledgeBaseRegistry
from ragchat.index.base import KeepsVectors, ListsChildren
from ragchat.index.fake import HashingEmbedder
from ragchat.retrieve import KBRetriever
from ragchat.retrieve.fields import title_index
from ragchat.settings import RetrievalSettings, Settings, VectorStoreSettings
from ragchat.types import Chunk


def _doc(doc_id: str, title: str, text: str) -> Chunk:
    return Chunk(f"{doc_id}:c0", doc_id, text, 0, None, False, {"title": title})


@pytest.fixture(params=["files", "embedded", "qdrant"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeBaseRegistry]:
    """Without settings (files under a root), and on each configured vector store."""
    settings = None
    if request.param != "files":
        if request.param == "qdrant":
            pytest.importorskip("qdrant_client")
        vs = VectorStoreSettings(backend=request.param)
        settings = Settings(data_dir=tmp_path, vector_store=vs)
    registry = KnowledgeBaseRegistry(tmp_path / "kb", HashingEmbedder(), settings=settings)
    with registry.writing("demo", create=True) as kb:
        kb.add_chunks(
            [_doc("a", "Anaemia", "low iron and tiredness"), _doc("b", "Asthma", "wheeze")]
        )
    assert registry.names() == ["demo"] and registry.describe("demo")["children"] == 2
    yield registry
    registry.close()
    if request.param == "qdrant":
        from ragchat.index.qdrant_conn import release

        assert settings is not None
        release(settings)


def test_the_proxy_lists_chunks_and_vectors_of_the_live_instance(
    registry: KnowledgeBaseRegistry,
) -> None:
    shared = registry.open("demo")
    assert isinstance(shared, ListsChildren) and isinstance(shared, KeepsVectors)
    first = title_index(shared)
    assert first is not None and len(first) == 2
    assert title_index(shared) is first  # cached while nothing changes
    with registry.reading("demo") as live:
        expected = live.stored_vectors(["a:c0", "b:c0"])
    got = shared.stored_vectors(["a:c0", "b:c0"])
    assert got is not None and expected is not None and np.allclose(got, expected)
    assert shared.stored_vectors(["a:c0", "missing"]) is None

    with registry.writing("demo") as kb:
        kb.add_chunks([_doc("c", "Eczema", "itchy dry skin")])
    second = title_index(shared)
    assert second is not None and second is not first and len(second) == 3


def test_the_title_signal_works_through_the_proxy(registry: KnowledgeBaseRegistry) -> None:
    retriever = KBRetriever(
        registry.open("demo"), RetrievalSettings(title_weight=0.5, rerank=False)
    )
    result = retriever.retrieve("anaemia")
    assert result.hits[0].chunk.chunk_id == "a:c0" and result.hits[0].scores["title"] > 0
