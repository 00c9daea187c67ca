"""The registry's live proxy (``SharedKB``) offers what retrieval needs beyond the protocol —
chunk listing for the title signal, stored vectors for feedback — and follows each write."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import IndexStateError, IngestCancelled, KnowledgeBaseNotFound
from ragchat.retrieve import KBRetriever
from ragchat.retrieve.fields import title_index
from ragchat.settings import RetrievalSettings, Settings, VectorStoreSettings
from ragchat.types import Chunk
from ragchat.vectorstores.base import KeepsVectors, ListsChildren
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.registry import KnowledgeBaseRegistry


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
    assert registry.names() == ["demo"] and registry.describe("demo").manifest.children == 2
    yield registry
    registry.close()
    if request.param == "qdrant":
        from ragchat.vectorstores.qdrant.conn import release

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


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[tuple[KnowledgeBaseRegistry, KnowledgeBaseRegistry]]:
    """Two registries over one data directory: what two server workers hold."""
    settings = Settings(data_dir=tmp_path)
    first, second = (
        KnowledgeBaseRegistry(settings.kb_root, HashingEmbedder(), settings=settings)
        for _ in range(2)
    )
    with first.writing("demo", create=True) as kb:
        kb.add_chunks([_doc("a", "Anaemia", "low iron and tiredness")])
    yield first, second
    first.close()
    second.close()


def test_a_commit_by_another_worker_is_seen_by_the_next_read(
    two_workers: tuple[KnowledgeBaseRegistry, KnowledgeBaseRegistry],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = two_workers
    shared = second.open("demo")
    assert shared.child_count() == 1
    before = shared.version()
    with first.writing("demo") as kb:
        kb.add_chunks([_doc("b", "Asthma", "wheeze and breathlessness")])
    assert shared.child_count() == 1  # checked at most once per STALE_CHECK_S
    monkeypatch.setattr("ragchat.vectorstores.registry.STALE_CHECK_S", 0.0)
    assert shared.child_count() == 2
    assert shared.version() != before  # caches keyed on the version are rebuilt
    assert [c.chunk_id for c in shared.get_chunks(["b:c0"])] == ["b:c0"]


def test_a_write_waits_for_another_workers_write_and_builds_on_it(
    two_workers: tuple[KnowledgeBaseRegistry, KnowledgeBaseRegistry],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = two_workers
    with second.reading("demo"):
        pass  # the second worker has an instance opened before the first one's write
    waited = threading.Event()
    entered = threading.Event()

    def second_write() -> None:
        with second.writing("demo", on_wait=waited.set) as kb:
            entered.set()
            kb.add_chunks([_doc("c", "Croup", "barking cough")])

    with first.writing("demo") as kb:
        kb.add_chunks([_doc("b", "Asthma", "wheeze")])
        thread = threading.Thread(target=second_write)
        thread.start()
        assert waited.wait(10)  # it says it waits, and does
        assert not entered.is_set()
    thread.join(30)
    assert entered.is_set()
    monkeypatch.setattr("ragchat.vectorstores.registry.STALE_CHECK_S", 0.0)
    for registry in (first, second):
        with registry.reading("demo") as live:
            got = live.get_chunks(["a:c0", "b:c0", "c:c0"])
        assert [c.chunk_id for c in got] == ["a:c0", "b:c0", "c:c0"]


def test_a_write_waiting_for_the_lock_stops_when_cancelled_or_after_its_timeout(
    two_workers: tuple[KnowledgeBaseRegistry, KnowledgeBaseRegistry],
) -> None:
    first, second = two_workers
    cancel = threading.Event()
    with first.writing("demo"):
        cancel.set()
        with pytest.raises(IngestCancelled), second.writing("demo", cancel=cancel):
            pass
        # A request's bounded wait, on the lock file and on this registry's own writer lock.
        with (
            pytest.raises(IndexStateError, match="being written"),
            second.writing("demo", timeout_s=0.2),
        ):
            pass
        with (
            pytest.raises(IndexStateError, match="being written"),
            first.writing("demo", timeout_s=0.2),
        ):
            pass


def test_a_knowledge_base_deleted_by_another_worker_is_gone_at_the_next_read(
    two_workers: tuple[KnowledgeBaseRegistry, KnowledgeBaseRegistry],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = two_workers
    with second.reading("demo") as kb:
        assert kb.child_count() == 1
    monkeypatch.setattr("ragchat.vectorstores.registry.STALE_CHECK_S", 0.0)
    KnowledgeBase.delete(first.root, "demo")
    assert second.vector_count("demo") is None
    with pytest.raises(KnowledgeBaseNotFound), second.reading("demo"):
        pass
