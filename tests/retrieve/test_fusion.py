from __future__ import annotations

import pytest

from ragchat.retrieve.fusion import (
    minmax_normalise,
    rrf_fusion,
    sort_ranked,
    weighted_minmax_fusion,
)


def approx_pairs(pairs: list[tuple[str, float]]) -> list[tuple[str, object]]:
    return [(cid, pytest.approx(score)) for cid, score in pairs]


class TestMinMax:
    def test_rescales_keeping_input_order(self) -> None:
        assert minmax_normalise([("a", 3.0), ("b", 1.0), ("c", 2.0)]) == [
            ("a", 1.0),
            ("b", 0.0),
            ("c", 0.5),
        ]

    def test_equal_nonzero_scores_all_become_one(self) -> None:
        assert minmax_normalise([("a", 2.0), ("b", 2.0)]) == [("a", 1.0), ("b", 1.0)]
        assert minmax_normalise([("a", 5.0)]) == [("a", 1.0)]

    def test_equal_zero_scores_stay_zero(self) -> None:
        assert minmax_normalise([("a", 0.0), ("b", 0.0)]) == [("a", 0.0), ("b", 0.0)]

    def test_empty(self) -> None:
        assert minmax_normalise([]) == []


class TestWeightedMinMax:
    DENSE = (("a", 0.9), ("b", 0.5), ("c", 0.1))
    BM25 = (("b", 10.0), ("d", 4.0), ("a", 2.0))

    def test_hand_computed(self) -> None:
        # norm dense: a 1, b .5, c 0 ; norm bm25: b 1, d .25, a 0
        fused = weighted_minmax_fusion(self.DENSE, self.BM25, alpha=0.6)
        assert fused == approx_pairs([("b", 0.7), ("a", 0.6), ("d", 0.1), ("c", 0.0)])

    def test_missing_doc_scores_zero_for_that_component(self) -> None:
        fused = dict(weighted_minmax_fusion([("a", 1.0), ("b", 0.0)], [("c", 3.0)], alpha=0.5))
        assert fused == {"a": 0.5, "b": 0.0, "c": 0.5}

    def test_alpha_one_is_dense_only(self) -> None:
        fused = dict(weighted_minmax_fusion(self.DENSE, self.BM25, alpha=1.0))
        assert fused == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0})
        ranked = [cid for cid, _ in weighted_minmax_fusion(self.DENSE, self.BM25, 1.0)]
        assert ranked[:2] == ["a", "b"]

    def test_alpha_zero_is_bm25_only(self) -> None:
        fused = weighted_minmax_fusion(self.DENSE, self.BM25, alpha=0.0)
        assert fused == approx_pairs([("b", 1.0), ("d", 0.25), ("a", 0.0), ("c", 0.0)])

    def test_ties_broken_by_chunk_id(self) -> None:
        fused = weighted_minmax_fusion([("b", 1.0), ("a", 1.0), ("c", 1.0)], [], alpha=0.5)
        assert fused == [("a", 0.5), ("b", 0.5), ("c", 0.5)]

    def test_empty_inputs(self) -> None:
        assert weighted_minmax_fusion([], [], 0.5) == []

    def test_rejects_alpha_out_of_range(self) -> None:
        with pytest.raises(ValueError):
            weighted_minmax_fusion(self.DENSE, self.BM25, alpha=1.5)


class TestRRF:
    L1 = (("a", 3.0), ("b", 2.0), ("c", 1.0))
    L2 = (("c", 9.0), ("a", 5.0))

    def test_hand_computed(self) -> None:
        fused = rrf_fusion([self.L1, self.L2], k=60)
        assert fused == approx_pairs(
            [("a", 1 / 61 + 1 / 62), ("c", 1 / 63 + 1 / 61), ("b", 1 / 62)]
        )

    def test_small_k(self) -> None:
        fused = rrf_fusion([self.L1, self.L2], k=1)
        assert fused == approx_pairs([("a", 1 / 2 + 1 / 3), ("c", 1 / 4 + 1 / 2), ("b", 1 / 3)])

    def test_weights(self) -> None:
        fused = rrf_fusion([self.L1, self.L2], k=60, weights=[2.0, 1.0])
        assert fused == approx_pairs(
            [("a", 2 / 61 + 1 / 62), ("c", 2 / 63 + 1 / 61), ("b", 2 / 62)]
        )

    def test_ranks_by_score_not_input_order(self) -> None:
        shuffled = [("c", 1.0), ("a", 3.0), ("b", 2.0)]
        assert rrf_fusion([shuffled, self.L2]) == rrf_fusion([self.L1, self.L2])

    def test_ties_broken_by_chunk_id(self) -> None:
        assert rrf_fusion([[("b", 1.0)], [("a", 1.0)]]) == approx_pairs(
            [("a", 1 / 61), ("b", 1 / 61)]
        )
        # Equal scores within one list: chunk id decides the rank.
        assert rrf_fusion([[("b", 1.0), ("a", 1.0)]]) == approx_pairs(
            [("a", 1 / 61), ("b", 1 / 62)]
        )

    def test_duplicate_id_in_a_list_counts_once(self) -> None:
        assert rrf_fusion([[("a", 1.0), ("a", 5.0), ("b", 2.0)]]) == approx_pairs(
            [("a", 1 / 61), ("b", 1 / 62)]
        )

    def test_bad_arguments(self) -> None:
        with pytest.raises(ValueError):
            rrf_fusion([self.L1], weights=[1.0, 2.0])
        with pytest.raises(ValueError):
            rrf_fusion([self.L1], k=0)


def test_sort_ranked_is_deterministic() -> None:
    assert sort_ranked([("b", 1.0), ("c", 2.0), ("a", 1.0)]) == [
        ("c", 2.0),
        ("a", 1.0),
        ("b", 1.0),
    ]
