from __future__ import annotations

import pytest

from ragchat.agents.heuristics.grade import cosine_grade, grade_documents, rewrite_query
from ragchat.types import Hit

from .conftest import make_hit


def _hit(dense: float | None = None, rerank: float | None = None, score: float = 0.5) -> Hit:
    h = make_hit("c", "text", score=score)
    h.scores = {}
    if dense is not None:
        h.scores["dense"] = dense
    if rerank is not None:
        h.scores["rerank"] = rerank
    return h


def test_dense_grades_are_monotonic_and_bounded() -> None:
    cosines = [x / 100 for x in range(-20, 101, 5)]
    grades = grade_documents([_hit(c) for c in cosines])
    assert grades == sorted(grades)
    assert all(0.0 <= g <= 1.0 for g in grades)


@pytest.mark.parametrize(
    ("cosine", "low", "high"),
    [(0.1, 0.0, 0.1), (0.19, 0.0, 0.12), (0.3, 0.3, 0.4), (0.6, 0.7, 0.8), (0.7, 0.75, 0.9)],
)
def test_calibration_points(cosine: float, low: float, high: float) -> None:
    assert low <= cosine_grade(cosine) <= high


def test_corrective_thresholds_mean_what_they_say() -> None:
    good = grade_documents([_hit(0.65), _hit(0.55), _hit(0.5)])
    assert min(good) >= 0.5 and sum(good) / 3 >= 0.6
    weak = grade_documents([_hit(0.44), _hit(0.42), _hit(0.3)])
    assert sum(weak) / 3 < 0.6 and weak[2] < 0.5


def test_rerank_is_a_sigmoid_averaged_with_dense() -> None:
    only_rerank = grade_documents([_hit(rerank=0.0), _hit(rerank=4.0), _hit(rerank=-4.0)])
    assert only_rerank[0] == pytest.approx(0.5)
    assert only_rerank[1] > 0.95 and only_rerank[2] < 0.05
    both = grade_documents([_hit(0.6, rerank=0.0)])[0]
    assert both == pytest.approx((cosine_grade(0.6) + 0.5) / 2, abs=1e-3)


def test_without_component_scores_rank_and_words_decide() -> None:
    hits = [
        make_hit("a", "Ibuprofen dose for adults is 200 to 400 mg.", score=0.03),
        make_hit("b", "Bedtime routines for toddlers.", score=0.02),
        make_hit("c", "Something unrelated.", score=0.01),
    ]
    for h in hits:
        h.scores = {"fused": h.score}
    grades = grade_documents(hits, "ibuprofen dose")
    assert grades[0] > grades[1] > grades[2]
    assert grade_documents([]) == []


def test_rewrite_query_adds_feedback_terms() -> None:
    hits = [
        make_hit(
            "a",
            "Maya Chen: Naps matter. Most toddlers nap once a day; the nap moves to lunchtime.",
            score=0.7,
        ),
        make_hit(
            "b",
            "Dropping a nap: toddlers move from two naps to one nap around 15 months.",
            score=0.6,
        ),
    ]
    rewritten = rewrite_query("when do toddlers drop naps", hits)
    assert rewritten.startswith("when do toddlers drop naps ")
    extra = rewritten.split()[5:]
    assert 1 <= len(extra) <= 4
    assert "maya" not in extra and "chen" not in extra  # speaker names are not feedback
    assert rewrite_query("query", []) == "query"
    same = [make_hit("a", "query query", score=0.5)]
    assert rewrite_query("query", same) == "query"
