from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

import pytest
import torch
from transformers import BertForSequenceClassification, BertTokenizer

from ragchat.errors import ModelLoadError
from ragchat.retrieve import CrossEncoderReranker, KBRetriever, load_reranker
from ragchat.retrieve.base import Reranker
from ragchat.retrieve.factory import build_retriever
from ragchat.settings import RerankerSettings, RetrievalSettings, Settings
from ragchat.types import Hit
from ragchat.vectorstores.embedded.kb import KnowledgeBase

QUERY = "cat fur"


def make_settings(model: str) -> Settings:
    return Settings(_env_file=None, reranker=RerankerSettings(model=model))  # type: ignore[call-arg]


@pytest.fixture(scope="module")
def reranker(tiny_cross_encoder: Path) -> CrossEncoderReranker:
    return CrossEncoderReranker(str(tiny_cross_encoder))


def direct_logits(model_dir: Path, query: str, texts: list[str]) -> list[float]:
    """The model's raw output, computed without sentence-transformers."""
    tokenizer = BertTokenizer.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir).eval()
    enc = tokenizer([query] * len(texts), texts, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        return [float(x) for x in model(**enc).logits.reshape(-1)]


def first_stage(kb: KnowledgeBase) -> list[Hit]:
    config = RetrievalSettings(mode="dense", parents=False, rerank=False, gate_threshold=None)
    return KBRetriever(kb, config).retrieve(QUERY, top_k=6).hits


def test_real_cross_encoder_reorders_by_model_scores(
    kb: KnowledgeBase, reranker: CrossEncoderReranker, tiny_cross_encoder: Path
) -> None:
    assert isinstance(reranker, Reranker)
    hits = first_stage(kb)
    expected = direct_logits(tiny_cross_encoder, QUERY, [h.chunk.text for h in hits])
    assert len(set(round(s, 4) for s in expected)) == len(expected)  # distinct: order is meaningful
    by_id = {h.chunk.chunk_id: s for h, s in zip(hits, expected, strict=True)}

    reranked = reranker.rerank(QUERY, hits)
    assert sorted(h.chunk.chunk_id for h in reranked) == sorted(by_id)
    assert [h.chunk.chunk_id for h in reranked] == sorted(by_id, key=lambda c: -by_id[c])
    for hit in reranked:
        assert hit.score == pytest.approx(by_id[hit.chunk.chunk_id], abs=1e-4)
        assert hit.scores["rerank"] == hit.score
        assert "dense" in hit.scores  # first-stage scores kept
    assert reranker.rerank(QUERY, []) == []


def test_pipeline_with_real_cross_encoder(
    kb: KnowledgeBase, reranker: CrossEncoderReranker
) -> None:
    config = RetrievalSettings(mode="hybrid", parents=False, rerank=True, gate_threshold=None)
    result = KBRetriever(kb, config, reranker=reranker).retrieve(QUERY, top_k=4)
    rerank_scores = [h.scores["rerank"] for h in result.hits]
    assert rerank_scores == sorted(rerank_scores, reverse=True)
    assert len(result.hits) == 4 and "rerank" in result.timings


def test_load_reranker_from_directory(tiny_cross_encoder: Path) -> None:
    loaded, status = load_reranker(make_settings(str(tiny_cross_encoder)))
    assert isinstance(loaded, CrossEncoderReranker)
    assert status == f"reranker: {tiny_cross_encoder}"


def test_missing_model_gives_no_reranker_fast_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = f"no-such-org/missing-cross-encoder-{uuid.uuid4().hex[:8]}"
    caplog.set_level(logging.WARNING, logger="ragchat.retrieve.rerank")
    start = time.perf_counter()
    loaded, status = load_reranker(make_settings(name))
    assert time.perf_counter() - start < 10  # local files only: no network wait
    assert loaded is None
    assert status.startswith("no reranker:") and name in status
    load_reranker(make_settings(name))
    [said] = [r.getMessage() for r in caplog.records]  # once, in one plain line
    assert "\n" not in said and name in said and "not reranked" in said
    assert "optional" in said and "`ragchat health` says how" in said
    assert "RAGCHAT_RERANKER__MODEL=/path/to/folder" not in said  # the how-to is for health
    assert "RAGCHAT_RERANKER__MODEL=/path/to/folder" in status


def test_disabled_reranker() -> None:
    loaded, status = load_reranker(make_settings(""))
    assert loaded is None and status.startswith("no reranker: disabled")


def test_constructor_raises_model_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="downloads are off"):
        CrossEncoderReranker(f"no-such-org/missing-{uuid.uuid4().hex[:8]}")
    with pytest.raises(ModelLoadError, match="local directory"):
        CrossEncoderReranker(str(tmp_path))  # a directory without a model


def test_build_retriever_shares_one_reranker(kb: KnowledgeBase, tiny_cross_encoder: Path) -> None:
    settings = make_settings(str(tiny_cross_encoder))
    settings.reranker.candidates = 4
    with_rerank = build_retriever(settings, kb)
    assert isinstance(with_rerank.reranker, CrossEncoderReranker)
    assert with_rerank.rerank_candidates == 4 and with_rerank.config == settings.retrieval
    again = build_retriever(settings, kb, settings.retrieval.model_copy(update={"top_k": 2}))
    assert again.reranker is with_rerank.reranker  # loaded once
    no_rerank = build_retriever(settings, kb, RetrievalSettings(rerank=False))
    assert no_rerank.reranker is None
    assert build_retriever(make_settings(""), kb).reranker is None


def test_a_missing_cross_encoder_is_said_without_hub_addresses_or_library_text() -> None:
    _, status = load_reranker(make_settings(f"no-such-org/reranker-{uuid.uuid4().hex[:8]}"))
    assert "http" not in status and "Error" not in status and "\n" not in status
    assert "not reranked" in status
    assert "RAGCHAT_RERANKER__MODEL=/path/to/folder" in status  # how to install one
