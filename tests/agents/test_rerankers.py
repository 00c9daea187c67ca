"""``reranker.model = "reader"`` makes every retriever built for chat and eval rerank with the
trained reader; any other name keeps the cross-encoder path (which, offline, loads nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.agents.config import AgentConfig
from ragchat.agents.rerankers import configured_reranker, kb_retriever
from ragchat.agents.retrievers import RetrieverCache
from ragchat.embed.fake import HashingEmbedder
from ragchat.reader.rerank import ReaderReranker
from ragchat.retrieve.rerank import load_reranker, reranker_status
from ragchat.settings import READER_RERANKER, Settings
from ragchat.types import Chunk
from ragchat.vectorstores.embedded.kb import KnowledgeBase


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.create(tmp_path, "leaflet", HashingEmbedder())
    texts = [
        "Ibuprofen is an anti-inflammatory drug sold as tablets.",
        "Adults can take 200 to 400 mg of ibuprofen every 4 to 6 hours.",
        "Keep the tablets below 25 degrees, out of the reach of children.",
    ]
    base.add_chunks([Chunk(f"c{i}", "leaflet", t, i) for i, t in enumerate(texts)])
    return base


def settings(tmp_path: Path, model: str) -> Settings:
    return Settings(data_dir=tmp_path, config_file=None, reranker={"model": model})


def test_reader_is_chosen_by_name(tmp_path: Path, kb: KnowledgeBase) -> None:
    chosen, status = configured_reranker(settings(tmp_path, READER_RERANKER), kb.embedder)
    assert isinstance(chosen, ReaderReranker) and status == "reranker: reader"
    empty, why = configured_reranker(settings(tmp_path, ""), kb.embedder)
    assert empty is None and "disabled" in why


def test_retrievers_rerank_with_the_reader(tmp_path: Path, kb: KnowledgeBase) -> None:
    s = settings(tmp_path, READER_RERANKER)
    config = s.retrieval.model_copy(update={"rerank": True, "gate_threshold": None})
    retriever = kb_retriever(s, kb, config)
    assert isinstance(retriever.reranker, ReaderReranker)
    result = retriever.retrieve("How much ibuprofen can adults take?", top_k=3)
    assert not any("rerank skipped" in n for n in result.notes)
    assert all("rerank" in h.scores and "dense" in h.scores for h in result.hits)
    off = kb_retriever(s, kb, config.model_copy(update={"rerank": False}))
    assert off.reranker is None


def test_chat_retrievers_use_the_configured_reranker(tmp_path: Path, kb: KnowledgeBase) -> None:
    cache = RetrieverCache(settings(tmp_path, READER_RERANKER), kb.embedder, opener=lambda name: kb)
    agent = AgentConfig(name="rag", kind="rag", description="answers", knowledge_base="leaflet")
    assert isinstance(cache.retriever(agent).reranker, ReaderReranker)


def test_the_retrieval_layer_alone_says_where_the_reader_is_built(tmp_path: Path) -> None:
    s = settings(tmp_path, READER_RERANKER)
    reranker, why = load_reranker(s)
    assert reranker is None and "ragchat.agents.rerankers" in why
    assert reranker_status(s).startswith("reader")
