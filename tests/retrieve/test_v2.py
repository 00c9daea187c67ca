"""Second-generation retrieval options: z-score fusion, completed score lists, the title field
and dense pseudo-relevance feedback (Rocchio)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

from ragchat.retrieve import KBRetriever
from ragchat.retrieve.feedback import feedback_vectors, rocchio
from ragchat.retrieve.fields import TitleIndex, chunk_title, title_index
from ragchat.retrieve.fusion import (
    weighted_minmax_fusion,
    weighted_score_fusion,
    zscore_normalise,
)
from ragchat.settings import RetrievalSettings
from ragchat.types import Chunk, Hit
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .conftest import KBFactory
from .helpers import SpyKB


def settings(**overrides: Any) -> RetrievalSettings:
    base: dict[str, Any] = {"parents": False, "gate_threshold": None, "rerank": False}
    return RetrievalSettings(**{**base, **overrides})


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def titled(doc_id: str, title: str, text: str) -> Chunk:
    return Chunk(f"{doc_id}:c0", doc_id, text, 0, metadata={"source": doc_id, "title": title})


# Bodies mention "anaemia" equally often; only one title names it.
TITLED = [
    titled("a", "Iron deficiency anaemia", "Low iron lowers haemoglobin; anaemia follows."),
    titled("b", "Vitamin B12 and the nerves", "B12 shortage causes anaemia and numb feet."),
    titled("c", "Bread baking", "Flour, water, yeast and salt make a simple dough."),
]


class TestZScore:
    def test_standard_scores_in_input_order(self) -> None:
        out = zscore_normalise([("a", 3.0), ("b", 1.0), ("c", 2.0)])
        std = (2 / 3) ** 0.5
        assert [c for c, _ in out] == ["a", "b", "c"]
        assert [s for _, s in out] == pytest.approx([1 / std, -1 / std, 0.0])

    def test_no_spread_is_all_zero(self) -> None:
        assert zscore_normalise([("a", 2.0), ("b", 2.0)]) == [("a", 0.0), ("b", 0.0)]
        assert zscore_normalise([]) == []


class TestWeightedScoreFusion:
    dense: ClassVar = [("a", 0.9), ("b", 0.5), ("c", 0.1)]
    bm25: ClassVar = [("b", 7.0), ("d", 3.0), ("a", 1.0)]

    def test_minmax_two_lists_equals_weighted_minmax(self) -> None:
        for alpha in (0.0, 0.3, 0.5, 1.0):
            expected = weighted_minmax_fusion(self.dense, self.bm25, alpha)
            got = weighted_score_fusion([(self.dense, alpha), (self.bm25, 1 - alpha)], "minmax")
            assert [c for c, _ in got] == [c for c, _ in expected]
            assert [s for _, s in got] == pytest.approx([s for _, s in expected])

    def test_zscore_missing_takes_the_lists_lowest_score(self) -> None:
        got = dict(weighted_score_fusion([(self.dense, 1.0), (self.bm25, 1.0)], "zscore"))
        zd, zb = dict(zscore_normalise(self.dense)), dict(zscore_normalise(self.bm25))
        assert got["c"] == pytest.approx(zd["c"] + min(zb.values()))
        assert got["d"] == pytest.approx(min(zd.values()) + zb["d"])
        assert got["a"] == pytest.approx(zd["a"] + zb["a"])

    def test_zscore_flat_list_still_prefers_its_members(self) -> None:
        got = dict(weighted_score_fusion([([("a", 1.0), ("b", 1.0)], 1.0), ([("c", 1.0)], 0.0)]))
        assert got["a"] > got["c"]
        flat = dict(weighted_score_fusion([([("a", 2.0), ("b", 2.0)], 1.0), ([], 0.0)], "zscore"))
        assert flat == {"a": 0.0, "b": 0.0}
        mixed = dict(
            weighted_score_fusion([([("a", 2.0)], 1.0), ([("b", 5.0), ("c", 1.0)], 0.0)], "zscore")
        )
        assert mixed["a"] > mixed["b"]

    def test_rejects_unknown_normalisation_and_negative_weights(self) -> None:
        with pytest.raises(ValueError, match="normalisation"):
            weighted_score_fusion([(self.dense, 1.0)], "softmax")
        with pytest.raises(ValueError, match="weights"):
            weighted_score_fusion([(self.dense, -1.0)])


class TestSettings:
    def test_new_fields_default_to_the_old_behaviour(self) -> None:
        s = RetrievalSettings()
        assert (s.fusion, s.complete_scores, s.title_weight, s.prf_docs) == (
            "minmax",
            False,
            0.0,
            0,
        )

    def test_default_pipeline_is_unchanged(self, kb: KnowledgeBase) -> None:
        spy = SpyKB(kb)
        result = KBRetriever(spy, settings(top_k=10)).retrieve("Mars planet")
        assert "title" not in result.timings and "prf" not in result.timings
        assert not spy.called("bm25_scores")
        assert all("title" not in h.scores for h in result.hits)


class TestCompleteScores:
    def test_every_hybrid_candidate_has_both_scores(self, kb: KnowledgeBase) -> None:
        spy = SpyKB(kb)
        cfg = settings(mode="hybrid", fusion="zscore", complete_scores=True, top_k=10)
        hits = KBRetriever(spy, cfg).retrieve("Mars planet").hits
        assert hits and all({"dense", "bm25"} <= set(h.scores) for h in hits)
        # dense-only candidates had their BM25 score looked up (0.0 when they share no term)
        assert spy.called("bm25_scores")
        assert any(h.scores["bm25"] == 0.0 for h in hits)

    def test_without_it_dense_only_candidates_have_no_bm25_score(self, kb: KnowledgeBase) -> None:
        hits = KBRetriever(kb, settings(mode="hybrid", top_k=10)).retrieve("Mars planet").hits
        assert any("bm25" not in h.scores for h in hits)

    def test_rrf_and_single_modes_ignore_it(self, kb: KnowledgeBase) -> None:
        for mode, fusion in (("hybrid", "rrf"), ("dense", "minmax"), ("bm25", "minmax")):
            spy = SpyKB(kb)
            cfg = settings(mode=mode, fusion=fusion, complete_scores=True)
            KBRetriever(spy, cfg).retrieve("Mars planet")
            assert not spy.called("bm25_scores")


class TestTitleField:
    def test_chunk_title_fallbacks(self) -> None:
        assert chunk_title(TITLED[0]) == "Iron deficiency anaemia"
        doc = Chunk("x", "x", "t", 0, metadata={"doc_title": "Doc", "heading_path": ["H"]})
        assert chunk_title(doc) == "Doc"
        assert chunk_title(Chunk("y", "y", "t", 0, metadata={"heading_path": ["Top", "Sub"]}))
        assert chunk_title(Chunk("z", "z", "t", 0)) == ""

    def test_title_index_scores_titles_only(self) -> None:
        index = TitleIndex(TITLED)
        a, b, c, unknown = index.scores("anaemia", ["a:c0", "b:c0", "c:c0", "nope"])
        assert a > 0 and b == 0.0 and c == 0.0 and unknown == 0.0
        assert index.scores("anaemia", []) == []

    def test_title_match_wins_and_is_reported(self, make_kb: KBFactory) -> None:
        kb = make_kb(TITLED)
        for fusion in ("minmax", "zscore", "rrf"):
            cfg = settings(mode="hybrid", fusion=fusion, title_weight=0.5, top_k=3)
            result = KBRetriever(kb, cfg).retrieve("anaemia")
            assert ids(result.hits)[0] == "a:c0", fusion
            assert result.hits[0].scores["title"] > 0
            assert "title" in result.timings
            assert all("title" not in h.scores for h in result.hits[1:])

    def test_index_is_cached_and_rebuilt_after_a_change(self, make_kb: KBFactory) -> None:
        kb = make_kb(TITLED[:2])
        first = title_index(kb)
        assert first is not None and len(first) == 2
        assert title_index(kb) is first
        kb.add_chunks([TITLED[2]])
        second = title_index(kb)
        assert second is not first and second is not None and len(second) == 3

    def test_ignored_when_the_kb_cannot_list_its_chunks(self, make_kb: KBFactory) -> None:
        spy = SpyKB(make_kb(TITLED))  # the protocol alone: no chunk store
        assert title_index(spy) is None
        result = KBRetriever(spy, settings(mode="hybrid", title_weight=0.5)).retrieve("anaemia")
        assert result.hits and all("title" not in h.scores for h in result.hits)


class TestRocchio:
    def test_moves_the_query_towards_the_feedback_mean(self) -> None:
        q = np.array([1.0, 0.0], dtype=np.float32)
        docs = np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
        moved = rocchio(q, docs, 1.0)
        assert moved == pytest.approx(np.array([1.0, 1.0]) / np.sqrt(2))
        assert np.linalg.norm(moved) == pytest.approx(1.0)

    def test_no_feedback_or_zero_weight_keeps_the_query(self) -> None:
        q = np.array([0.6, 0.8], dtype=np.float32)
        assert rocchio(q, np.zeros((0, 2), dtype=np.float32), 0.5) is q
        assert rocchio(q, np.ones((1, 2), dtype=np.float32), 0.0) is q
        with pytest.raises(ValueError):
            rocchio(q, np.ones((1, 2), dtype=np.float32), -1.0)

    def test_stored_vectors_match_embedding_the_text(self, kb: KnowledgeBase) -> None:
        chunks = kb.get_chunks(["space:c1", "pets:c0"])
        stored = kb.stored_vectors([c.chunk_id for c in chunks])
        assert stored is not None
        fresh = kb.embedder.embed_documents([c.text for c in chunks])
        assert stored == pytest.approx(fresh, abs=1e-5)
        assert kb.stored_vectors(["space:c1", "missing"]) is None
        # a KB that does not expose vectors: the texts are embedded
        assert feedback_vectors(SpyKB(kb), chunks) == pytest.approx(fresh, abs=1e-5)

    def test_pipeline_runs_a_feedback_pass(self, kb: KnowledgeBase) -> None:
        spy = SpyKB(kb)
        cfg = settings(mode="hybrid", prf_docs=2, prf_weight=0.5, top_k=5)
        result = KBRetriever(spy, cfg).retrieve("Mars planet")
        assert "prf" in result.timings
        assert len(spy.called("dense_search")) == 2  # first pass + feedback pass
        assert ids(result.hits)[0] == "space:c1"

    def test_bm25_mode_skips_it(self, kb: KnowledgeBase) -> None:
        spy = SpyKB(kb)
        result = KBRetriever(spy, settings(mode="bm25", prf_docs=2)).retrieve("Mars planet")
        assert "prf" not in result.timings
        assert not spy.called("dense_search")
