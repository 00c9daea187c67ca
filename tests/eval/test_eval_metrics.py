import random

import ir_measures
import pytest
from ir_measures import RR, R, nDCG

from ragchat.eval.metrics import (
    first_relevant_rank,
    latency_stats,
    mean_metrics,
    ndcg,
    query_metrics,
    recall,
    reciprocal_rank,
)

MEASURES = {"nDCG@10": nDCG @ 10, "MRR@10": RR @ 10, "R@1": R @ 1, "R@10": R @ 10, "R@100": R @ 100}


def _reference(qrels: dict[str, dict[str, int]], run: dict[str, list[str]]) -> dict[str, float]:
    """ir_measures (pytrec_eval) over the same ranking, given as strictly decreasing scores."""
    scored = {
        q: {d: float(len(ranked) - i) for i, d in enumerate(ranked)} for q, ranked in run.items()
    }
    agg = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, scored)
    return {name: agg[m] for name, m in MEASURES.items()}


def _ours(qrels: dict[str, dict[str, int]], run: dict[str, list[str]]) -> dict[str, float]:
    return mean_metrics([query_metrics(run[q], qrels[q]) for q in sorted(qrels)])


def test_hand_built_values_and_agreement_with_ir_measures() -> None:
    qrels = {"q1": {"a": 2, "b": 1, "x": 0}, "q2": {"c": 1}, "q3": {"d": 1, "e": 3}}
    run = {"q1": ["x", "a", "z", "b"], "q2": ["y", "z", "c"], "q3": ["f", "g"]}
    ours = _ours(qrels, run)
    # q1: first relevant at rank 2; q2 at rank 3; q3 none.
    assert ours["MRR@10"] == pytest.approx((1 / 2 + 1 / 3 + 0) / 3)
    assert ours["R@1"] == 0.0
    assert ours["R@10"] == pytest.approx((1.0 + 1.0 + 0.0) / 3)
    ideal_q1 = 2 + 1 / 1.5849625007211563
    dcg_q1 = 2 / 1.5849625007211563 + 1 / 2.321928094887362
    assert ndcg(run["q1"], qrels["q1"], 10) == pytest.approx(dcg_q1 / ideal_q1)
    ref = _reference(qrels, run)
    for name, value in ref.items():
        assert ours[name] == pytest.approx(value, abs=1e-6), name


def test_random_run_of_50_queries_agrees_with_ir_measures() -> None:
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for q in range(50):
        docs = [f"d{i}" for i in range(150)]
        judged = rng.sample(docs, rng.randint(1, 25))
        rels = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        rels[judged[0]] = max(rels[judged[0]], 1)  # at least one relevant unit
        qrels[f"q{q}"] = rels
        run[f"q{q}"] = rng.sample(docs, rng.randint(5, 130))
    ours, ref = _ours(qrels, run), _reference(qrels, run)
    assert ref["nDCG@10"] > 0  # the comparison is not between two zeros
    for name, value in ref.items():
        assert ours[name] == pytest.approx(value, abs=1e-6), name


def test_single_query_edge_cases() -> None:
    rels = {"a": 1, "b": 1}
    assert first_relevant_rank(["z", "b"], rels) == 2
    assert first_relevant_rank(["z"], rels) is None
    assert reciprocal_rank(["z"] * 0 + [f"n{i}" for i in range(10)] + ["a"], rels, 10) == 0.0
    assert recall(["a", "z", "b"], rels, 1) == 0.5
    assert recall(["a"], {"a": 0}, 10) == 0.0
    assert ndcg([], rels, 10) == 0.0


def test_latency_stats() -> None:
    stats = latency_stats([float(v) for v in range(1, 101)])
    assert stats["p50"] == pytest.approx(50.5)
    assert stats["p95"] == pytest.approx(95.05)
    assert stats["max"] == 100.0
    assert latency_stats([]) == {"p50": 0.0, "p95": 0.0, "max": 0.0}
