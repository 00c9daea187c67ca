"""The reader as a reranker: the passage holding the sentence that answers goes first, ties
and passages without a candidate keep the order they came in, and the fused scores stay."""

from __future__ import annotations

from typing import Any

import numpy as np
from tests.agents.heuristics.conftest import make_hit

from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.reader.head import Head
from ragchat.reader.model import ModelCard, ReaderModel
from ragchat.reader.rerank import ReaderReranker
from ragchat.retrieve.base import Reranker
from ragchat.types import Hit

# Fused order: the passage about the same drug but not the dose ranks first, the dose second.
FUSED = [
    make_hit(
        "what",
        "Ibuprofen is a non-steroidal anti-inflammatory drug, usually shortened to NSAID. "
        "It is sold without a prescription as tablets and liquids for adults and children.",
        title="Ibuprofen", heading_path=["Ibuprofen", "What it is"], doc_id="leaflet",
        position=0, score=0.9,
    ),
    make_hit(
        "dose",
        "Adults can take 200 to 400 mg every 4 to 6 hours. Do not take more than 1,200 mg "
        "in 24 hours without a doctor's advice.",
        title="Ibuprofen", heading_path=["Ibuprofen", "Dose"], doc_id="leaflet", position=1,
        score=0.8,
    ),
    make_hit(
        "storage",
        "Keep the tablets below 25 °C, out of the sight and reach of children.",
        title="Ibuprofen", heading_path=["Ibuprofen", "Storing"], doc_id="leaflet",
        position=2, score=0.7,
    ),
]  # fmt: skip


def ids(hits: list[Hit]) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def test_the_passage_holding_the_answer_goes_first(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reranker = ReaderReranker(real_embedder, model)
    assert isinstance(reranker, Reranker)
    out = reranker.rerank("How much ibuprofen can an adult take?", FUSED)
    assert ids(out)[0] == "dose"
    assert sorted(ids(out)) == sorted(ids(FUSED))
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    fused = {h.chunk.chunk_id: h.score for h in FUSED}
    for h in out:  # the fused scores stay beside the reader's
        assert h.scores["rerank"] == h.score
        assert 0.0 <= h.score <= 1.0
        assert h.scores["dense"] == fused[h.chunk.chunk_id]


class ConstantScorer:
    """Every candidate gets the same probability: every passage ties."""

    def predict(self, x: np.ndarray, num_threads: int = 1) -> np.ndarray:
        return np.full(len(x), 0.5)


def constant_model() -> ReaderModel:
    scorer: Any = ConstantScorer()
    unused = Head(np.zeros(0, dtype=np.float32), 0.0, "")  # the reranker reads no head
    return ReaderModel(scorer, scorer, ModelCard(), unused)


def test_ties_and_passages_without_a_candidate_keep_their_order() -> None:
    reranker = ReaderReranker(HashingEmbedder(), constant_model())
    # not in chunk-id order, so a sort that breaks ties by id would fail
    hits = [FUSED[2], FUSED[0], make_hit("blank", "   "), FUSED[1]]
    out = reranker.rerank("How much can an adult take?", hits)
    assert ids(out) == ["storage", "what", "dose", "blank"]  # the blank one has no candidate
    assert [h.score for h in out] == [0.5, 0.5, 0.5, 0.0]


def test_no_hits_is_no_work() -> None:
    reranker = ReaderReranker(HashingEmbedder(), constant_model())
    assert reranker.rerank("anything", []) == []
    assert reranker.scores("anything", []) == []
