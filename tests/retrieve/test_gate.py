from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from ragchat.errors import RetrievalError
from ragchat.retrieve import KBRetriever, retrieve_from_text
from ragchat.retrieve.gate import adaptive_k, refuses, top_relevance
from ragchat.settings import RetrievalSettings
from ragchat.types import Hit, RetrievalResult
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .helpers import SpyKB


def settings(**overrides: Any) -> RetrievalSettings:
    base: dict[str, Any] = {"parents": False, "gate_threshold": None, "rerank": False}
    return RetrievalSettings(**{**base, **overrides})


def cosine(kb: KnowledgeBase, query: str, text: str) -> float:
    q = kb.embedder.embed_query(query)
    d = kb.embedder.embed_documents([text])[0]
    return float(np.dot(q, d))


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid", "dense_first"])
def test_relevance_is_cosine_of_best_hit_in_every_mode(kb: KnowledgeBase, mode: str) -> None:
    result = KBRetriever(kb, settings(mode=mode)).retrieve("Mars planet atmosphere")
    top = result.hits[0]
    assert result.relevance == pytest.approx(cosine(kb, "Mars planet atmosphere", top.chunk.text))


def test_query_is_embedded_once(kb: KnowledgeBase) -> None:
    config = settings(mode="hybrid", parents=True, neighbours=True, adaptive_top_k=True)
    before = kb.embedder.calls  # type: ignore[attr-defined]
    KBRetriever(kb, config).retrieve("cat fur")
    assert kb.embedder.calls - before == 1  # type: ignore[attr-defined]


def test_gate_fires_below_threshold_and_keeps_hits(kb: KnowledgeBase) -> None:
    relevance = KBRetriever(kb, settings()).retrieve("cat fur").relevance
    assert 0 < relevance < 1
    below = KBRetriever(kb, settings(gate_threshold=relevance + 0.01)).retrieve("cat fur")
    assert below.no_answer
    assert below.hits and below.hits[0].chunk.chunk_id == "pets:c1"
    assert any(n.startswith("gate:") for n in below.notes)
    above = KBRetriever(kb, settings(gate_threshold=relevance - 0.01)).retrieve("cat fur")
    assert not above.no_answer
    off = KBRetriever(kb, settings(gate_threshold=None)).retrieve("cat fur")
    assert not off.no_answer


def test_off_topic_query_is_refused_by_default_threshold(kb: KnowledgeBase) -> None:
    config = RetrievalSettings(parents=False, rerank=False)  # default gate 0.25
    off_topic = KBRetriever(kb, config).retrieve("quantum chromodynamics lattice")
    assert off_topic.no_answer and off_topic.hits and off_topic.relevance < 0.25
    on_topic = KBRetriever(kb, config).retrieve("Mars planet atmosphere")
    assert not on_topic.no_answer


def test_no_hits_means_no_answer_even_without_gate(kb: KnowledgeBase) -> None:
    result = KBRetriever(kb, settings()).retrieve("cat", filters={"chapter": "nonexistent"})
    assert result.hits == [] and result.no_answer and result.relevance == 0.0


def test_refuses_rule() -> None:
    assert refuses(0.9, has_hits=False, threshold=None)
    assert refuses(0.2, has_hits=True, threshold=0.3)
    assert not refuses(0.3, has_hits=True, threshold=0.3)
    assert not refuses(0.0, has_hits=True, threshold=None)


def test_adaptive_k_rule() -> None:
    assert adaptive_k(0.6, 5, high=0.6, low=0.4) == 3
    assert adaptive_k(0.5, 5, high=0.6, low=0.4) == 5
    assert adaptive_k(0.4, 5, high=0.6, low=0.4) == 5
    assert adaptive_k(0.39, 5, high=0.6, low=0.4) == 7


@pytest.mark.parametrize(
    ("high", "low", "expected"),
    [(0.0, 0.0, 3), (0.99, 0.99, 7), (0.99, 0.0, 5)],
)
def test_adaptive_top_k_in_pipeline(
    kb: KnowledgeBase, high: float, low: float, expected: int
) -> None:
    config = settings(mode="dense", adaptive_top_k=True, top_k=5)
    result = KBRetriever(kb, config, adaptive_high=high, adaptive_low=low).retrieve("cat fur")
    assert len(result.hits) == expected
    assert f"adaptive top_k={expected}" in result.notes[0]


def test_adaptive_thresholds_are_validated(kb: KnowledgeBase) -> None:
    with pytest.raises(ValueError):
        KBRetriever(kb, settings(), adaptive_high=0.3, adaptive_low=0.5)


# -- selected-text mode -------------------------------------------------------------------
PASSAGE = "Honeybees dance to tell the hive where flowers with nectar are."


def test_selected_text_is_the_only_context(kb: KnowledgeBase) -> None:
    spy = SpyKB(kb)
    result = KBRetriever(spy, settings(gate_threshold=0.99)).retrieve_from_text(
        "how do bees share flower locations", PASSAGE
    )
    assert spy.calls == []  # the knowledge base is not searched
    (hit,) = result.hits
    assert hit.chunk.chunk_id == "selection"
    assert hit.context == PASSAGE and hit.context_ids == ("selection",)
    expected = cosine(kb, "how do bees share flower locations", PASSAGE)
    assert result.relevance == pytest.approx(expected) == hit.score
    assert result.mode == "selection"
    assert not result.no_answer  # the user chose the text: no gate by default
    assert set(result.timings) == {"embed", "total"}


def test_selected_text_optional_gate_and_validation(kb: KnowledgeBase) -> None:
    gated = retrieve_from_text(kb.embedder, "Jupiter storm", PASSAGE, gate_threshold=0.99)
    assert gated.no_answer and len(gated.hits) == 1
    with pytest.raises(RetrievalError):
        retrieve_from_text(kb.embedder, "bees", "  ")
    with pytest.raises(RetrievalError):
        retrieve_from_text(kb.embedder, "", PASSAGE)


def test_relevance_looks_past_a_weak_first_hit() -> None:
    from ragchat.types import Chunk

    class Scores:
        def dense_scores(self, query_vec: Any, chunk_ids: list[str]) -> list[float]:
            table = {"weak": 0.2, "strong": 0.6, "third": 0.3, "fourth": 0.9}
            return [table[c] for c in chunk_ids]

    hits = [
        Hit(Chunk(c, "d", "t", i), 1.0) for i, c in enumerate(["weak", "strong", "third", "fourth"])
    ]
    assert top_relevance(Scores(), np.zeros(2), hits) == pytest.approx(0.6)  # type: ignore[arg-type]
    assert top_relevance(Scores(), np.zeros(2), hits, window=1) == pytest.approx(0.2)  # type: ignore[arg-type]
    assert refuses(0.6, True, 0.3) is False


class PreferChunk:
    """A reranker that puts one chunk first and keeps the others' scores: the case the gate
    window exists for (a reranker or fusion ranking a less similar chunk first)."""

    model_name = "prefer"

    def __init__(self, chunk_id: str) -> None:
        self.chunk_id = chunk_id

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        return [replace(h, score=10.0) if h.chunk.chunk_id == self.chunk_id else h for h in hits]


def test_gate_window_1_is_strictly_the_top_hit(kb: KnowledgeBase) -> None:
    query, first = "Mars planet atmosphere", "kitchen:c0"  # the bread chunk is ranked first
    base = KBRetriever(kb, settings(mode="dense")).retrieve(query)
    second = base.hits[0].chunk  # the most similar chunk, now second
    low, high = cosine(kb, query, kb.get_chunks([first])[0].text), cosine(kb, query, second.text)
    assert low < high
    threshold = (low + high) / 2

    def gated(window: int) -> RetrievalResult:
        config = settings(mode="dense", rerank=True, gate_threshold=threshold, gate_window=window)
        return KBRetriever(kb, config, reranker=PreferChunk(first)).retrieve(query)

    strict = gated(1)
    assert [h.chunk.chunk_id for h in strict.hits[:2]] == [first, second.chunk_id]
    assert strict.no_answer and strict.relevance == pytest.approx(low)
    assert any(n.startswith("gate:") for n in strict.notes)
    default = gated(3)
    assert not default.no_answer and default.relevance == pytest.approx(high)
    assert RetrievalSettings().gate_window == 3
    with pytest.raises(ValidationError):
        RetrievalSettings(gate_window=0)
    with pytest.raises(ValueError):
        top_relevance(kb, kb.embedder.embed_query(query), strict.hits, window=0)


def _hit(text: str) -> Hit:
    from ragchat.types import Chunk

    return Hit(Chunk(chunk_id=text[:8], doc_id="d", text=text, position=0), score=1.0)


def test_an_identifier_the_passage_names_is_evidence_a_cosine_cannot_give() -> None:
    from ragchat.retrieve.gate import names_identifiers

    manual = [_hit("If the display shows E2, refit the cartridge. If it shows E5, open the valve.")]
    assert names_identifiers("What does error E5 mean?", manual)
    assert names_identifiers("and e2?", manual)
    assert not names_identifiers("What does error E7 mean?", manual)  # not in the passage
    assert not names_identifiers("What does error E5 or E7 mean?", manual)  # one missing
    assert not names_identifiers("How do I refit the cartridge?", manual)  # no identifier
    assert not names_identifiers("What does E5 mean?", manual, window=0)
    # words and plain numbers are not identifiers: the cosine alone decides for them
    assert not names_identifiers("Is 2024 the year?", [_hit("In 2024 the year ended.")])
