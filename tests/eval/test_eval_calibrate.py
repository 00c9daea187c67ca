from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ragchat.eval.calibrate import (
    Scored,
    calibrate,
    default_ood_path,
    load_ood,
    recommend,
    sweep,
    thresholds,
    write_calibration,
)
from ragchat.eval.data import CorpusUnits, Query
from ragchat.eval.retrieval import Gold
from ragchat.types import Chunk, Hit, RetrievalResult


class ScoreRetriever:
    """Returns one hit of a fixed corpus id and a fixed relevance per query text."""

    def __init__(self, table: Mapping[str, tuple[str | None, float]]) -> None:
        self.table = table

    def retrieve(
        self, query: str, *, top_k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> RetrievalResult:
        corpus_id, relevance = self.table[query]
        hits = (
            []
            if corpus_id is None
            else [Hit(Chunk("c", "d", "t", 0, metadata={"corpus_id": corpus_id}), 1.0)]
        )
        return RetrievalResult(query, hits, no_answer=False, relevance=relevance)


def _scored(inside: list[float], outside: list[float]) -> list[Scored]:
    return [Scored(f"i{n}", True, r, True, True) for n, r in enumerate(inside)] + [
        Scored(f"o{n}", False, r, True, False) for n, r in enumerate(outside)
    ]


def test_grid() -> None:
    grid = thresholds()
    assert (len(grid), grid[0], grid[25], grid[-1]) == (101, 0.0, 0.25, 1.0)


def test_recommends_separating_threshold_lowest_on_ties() -> None:
    rows = sweep(_scored([0.5, 0.6, 0.7, 0.8], [0.1, 0.2, 0.3, 0.45]))
    best = recommend(rows)
    # every threshold in (0.45, 0.50] separates perfectly; the lowest grid point wins
    assert best.threshold == 0.46 and best.balanced == 1.0
    assert (best.in_answered, best.ood_refusal) == (1.0, 1.0)
    at_zero = rows[0]
    assert (at_zero.in_answered, at_zero.ood_refusal, at_zero.balanced) == (1.0, 0.0, 0.5)


def test_overlapping_scores_tie_goes_to_the_lower_threshold() -> None:
    # 0.21 loses no answer but lets OOD 0.35 through; 0.36 refuses all OOD but also the
    # in-domain 0.3: both have balanced accuracy 0.875, and the lower one is recommended.
    rows = sweep(_scored([0.3, 0.6, 0.7, 0.8], [0.1, 0.2, 0.35, 0.2]))
    by_t = {r.threshold: r for r in rows}
    assert by_t[0.21].balanced == by_t[0.36].balanced == 0.875
    best = recommend(rows)
    assert best.threshold == 0.21
    assert (best.in_answered, best.ood_refusal) == (1.0, 0.75)
    # remove the overlap and the higher plateau alone is optimal
    assert recommend(sweep(_scored([0.6, 0.7], [0.1, 0.35]))).threshold == 0.36


def test_calibrate_end_to_end_with_recall_kept(tmp_path: Path) -> None:
    table = {
        "in-1": ("A", 0.8), "in-2": ("X", 0.7), "in-3": ("C", 0.2), "in-4": (None, 0.0),
        "out-1": ("Z", 0.1), "out-2": ("Z", 0.15),
    }  # fmt: skip
    gold = Gold(
        {"1": {"A": 1}, "2": {"B": 1}, "3": {"C": 1}, "4": {"D": 1}}, CorpusUnits(), "corpus"
    )
    inside = [Query(str(n), f"in-{n}") for n in range(1, 5)]
    ood = [Query("o1", "out-1"), Query("o2", "out-2")]
    cal = calibrate(ScoreRetriever(table), inside, gold, ood, config="fake")
    assert cal.best.threshold == 0.16  # answers in-1, in-2, in-3; refuses both OOD
    assert cal.best.in_answered == pytest.approx(0.75)
    assert cal.best.in_recall_kept == pytest.approx(0.5)  # in-1 and in-3 had their gold
    assert cal.rows[0].in_answered == pytest.approx(0.75)  # no hits is refused even at 0
    paths = write_calibration(cal, tmp_path)
    assert paths["png"].read_bytes()[:4] == b"\x89PNG"
    lines = paths["csv"].read_text().splitlines()
    assert lines[0] == "threshold,in_answered,in_recall_kept,ood_refusal,balanced"
    assert len(lines) == 102
    assert '"threshold": 0.16' in paths["json"].read_text()


def test_packaged_out_of_domain_questions_load() -> None:
    assert default_ood_path().is_file()
    ood = load_ood()
    assert len(ood) >= 50 and ood[0].qid == "ood-001"
