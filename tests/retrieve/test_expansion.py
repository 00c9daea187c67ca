from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ragchat.retrieve import KBRetriever, PRFExpander, QueryExpander
from ragchat.retrieve.expansion import STOPWORDS
from ragchat.settings import RetrievalSettings
from ragchat.types import Chunk, Hit, RetrievalResult
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .conftest import KBFactory


def settings(**overrides: Any) -> RetrievalSettings:
    base: dict[str, Any] = {"parents": False, "gate_threshold": None, "rerank": False}
    return RetrievalSettings(**{**base, **overrides})


def hit(chunk_id: str, text: str) -> Hit:
    return Hit(Chunk(chunk_id, "d", text, 0), score=1.0)


def ids(result: RetrievalResult) -> list[str]:
    return [h.chunk.chunk_id for h in result.hits]


# Only c0 contains the query word; c1 is about the same thing in other words.
FELINES = [
    Chunk("c0", "cats", "Felines such as cats purr softly when content.", 0),
    Chunk("c1", "cats", "Cats purr and knead blankets near warm windows.", 1),
    Chunk("c2", "space", "Jupiter storms swirl for centuries.", 0),
    Chunk("c3", "garden", "Gardeners prune roses in early spring.", 0),
]


@pytest.fixture(scope="module")
def felines_kb(make_kb: KBFactory) -> KnowledgeBase:
    return make_kb(FELINES)


class TestPRFExpander:
    def test_picks_frequent_terms_of_top_hits_skipping_stopwords_and_query(self) -> None:
        result = RetrievalResult(
            query="cat food",
            hits=[
                hit("a", "The cats eat tuna. Tuna is the food cats love, tuna daily."),
                hit("b", "Tuna and salmon are fish."),
                hit("c", "Salmon swim upstream."),
                hit("d", "Ignored because only the top three hits are feedback."),
            ],
        )
        terms = PRFExpander(feedback_docs=3, n_terms=3).expansion_terms("cat food", result)
        # tuna: (1+ln3)/1 + 1/2 ; salmon: 1/2 + 1/3 ; daily, eat, love: 1/1 each
        assert terms == ["tuna", "daily", "eat"]
        all_terms = PRFExpander(feedback_docs=3, n_terms=20).expansion_terms("cat food", result)
        assert "cats" not in all_terms and "food" not in all_terms  # in the query (plural folded)
        assert not set(all_terms) & STOPWORDS
        assert "ignored" not in all_terms
        assert "salmon" in all_terms

    def test_weak_feedback_hits_barely_count(self) -> None:
        strong = Hit(Chunk("a", "d", "cats purr", 0), score=1.0)
        weak = Hit(Chunk("b", "d", "jupiter storms", 0), score=0.01)
        result = RetrievalResult(query="felines", hits=[strong, weak])
        assert PRFExpander().expansion_terms("felines", result) == ["cats", "purr"]
        equal = RetrievalResult(query="felines", hits=[strong, replace(weak, score=1.0)])
        assert "jupiter" in PRFExpander().expansion_terms("felines", equal)

    def test_expand_appends_terms_to_query(self) -> None:
        result = RetrievalResult(query="q", hits=[hit("a", "alpha beta beta")])
        assert PRFExpander().expand("alpha", result) == ["alpha beta"]
        empty = RetrievalResult(query="q", hits=[])
        assert PRFExpander().expand("alpha", empty) == []

    def test_is_a_query_expander(self) -> None:
        assert isinstance(PRFExpander(), QueryExpander)


def test_prf_adds_terms_and_changes_ranking(felines_kb: KnowledgeBase) -> None:
    plain = KBRetriever(felines_kb, settings(mode="bm25")).retrieve("felines")
    assert ids(plain) == ["c0"]
    config = settings(mode="bm25", query_expansion=True)
    result = KBRetriever(felines_kb, config, always_expand=True).retrieve("felines")
    (expanded,) = result.expanded_queries
    assert expanded.startswith("felines ")
    assert {"cats", "purr"} <= set(expanded.split())
    assert ids(result) == ["c0", "c1"]  # c1 found through the feedback terms
    assert result.hits[0].scores["multi_query"] == pytest.approx(1 / 61 + 1 / 61)
    assert "expand" in result.timings


@pytest.mark.parametrize("mode", ["dense", "hybrid", "dense_first"])
def test_prf_promotes_related_chunk(felines_kb: KnowledgeBase, mode: str) -> None:
    plain = KBRetriever(felines_kb, settings(mode=mode)).retrieve("felines")
    assert ids(plain)[0] == "c0" and ids(plain)[-1] == "c1"
    config = settings(mode=mode, query_expansion=True)
    expanded = KBRetriever(felines_kb, config, always_expand=True).retrieve("felines")
    assert ids(expanded)[:2] == ["c0", "c1"]
    # The weak off-topic hits of the first pass did not leak terms into the query.
    assert expanded.expanded_queries == ["felines cats content purr softly"]


def test_expansion_only_when_confidence_is_low(felines_kb: KnowledgeBase) -> None:
    config = settings(mode="bm25", query_expansion=True)
    confident = KBRetriever(felines_kb, config, expand_below=0.0).retrieve("felines")
    assert confident.expanded_queries == [] and "expand" not in confident.timings
    unsure = KBRetriever(felines_kb, config, expand_below=1.01).retrieve("felines")
    assert unsure.expanded_queries and "expand" in unsure.timings
    off = KBRetriever(felines_kb, settings(mode="bm25"), always_expand=True).retrieve("felines")
    assert off.expanded_queries == []


class FixedExpander:
    """Returns fixed variations and records what it was given."""

    def __init__(self, variants: list[str]) -> None:
        self.variants = variants
        self.seen: list[list[str]] = []

    def expand(self, query: str, result_so_far: RetrievalResult) -> list[str]:
        self.seen.append(ids(result_so_far))
        return self.variants


def test_all_variations_are_searched_and_fused(felines_kb: KnowledgeBase) -> None:
    expander = FixedExpander(["Jupiter storms", "roses spring", "felines"])
    config = settings(mode="bm25", query_expansion=True)
    result = KBRetriever(felines_kb, config, expander=expander, always_expand=True).retrieve(
        "felines"
    )
    assert expander.seen == [["c0"]]  # the first pass
    assert result.expanded_queries == ["Jupiter storms", "roses spring"]  # the query itself dropped
    assert set(ids(result)) == {"c0", "c2", "c3"}
    assert ids(result)[0] == "c0"  # ties on RRF broken by chunk id


def test_no_variation_keeps_first_pass(felines_kb: KnowledgeBase) -> None:
    config = settings(mode="bm25", query_expansion=True)
    retriever = KBRetriever(felines_kb, config, expander=FixedExpander([]), always_expand=True)
    result = retriever.retrieve("felines")
    assert ids(result) == ["c0"] and result.expanded_queries == []
    assert any("expansion" in n for n in result.notes)
