"""Ranking metrics, written out so their exact definitions are visible and testable.

They follow trec_eval (and so ``ir_measures``/``pytrec_eval``) conventions: a unit is relevant
when its judgement is >= 1; nDCG uses gain = judgement (linear, as ``ndcg_cut``) with a log2
discount, and the ideal ranking is built from all judged units of the query. ``ranked`` is a
list of unique unit ids, best first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

RECALL_KS = (1, 3, 5, 10, 100)
METRIC_NAMES = ("MRR@10", *(f"R@{k}" for k in RECALL_KS), "nDCG@10")


def first_relevant_rank(ranked: Sequence[str], rels: Mapping[str, int]) -> int | None:
    """1-based rank of the first relevant unit, None when none was retrieved."""
    for rank, unit in enumerate(ranked, start=1):
        if rels.get(unit, 0) >= 1:
            return rank
    return None


def reciprocal_rank(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    rank = first_relevant_rank(ranked[:k], rels)
    return 0.0 if rank is None else 1.0 / rank


def recall(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    relevant = {u for u, r in rels.items() if r >= 1}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def _dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    ideal = _dcg(sorted((max(r, 0) for r in rels.values()), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return _dcg(max(rels.get(u, 0), 0) for u in ranked[:k]) / ideal


def query_metrics(ranked: Sequence[str], rels: Mapping[str, int]) -> dict[str, float]:
    """All ranking metrics of one query, keyed by ``METRIC_NAMES``."""
    out = {"MRR@10": reciprocal_rank(ranked, rels, 10)}
    out.update({f"R@{k}": recall(ranked, rels, k) for k in RECALL_KS})
    out["nDCG@10"] = ndcg(ranked, rels, 10)
    return out


def has_relevant(rels: Mapping[str, int]) -> bool:
    """Queries without a relevant judgement are skipped: every metric would be 0 or undefined."""
    return any(r >= 1 for r in rels.values())


def mean_metrics(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Macro average over queries (what trec_eval reports)."""
    if not per_query:
        return {name: 0.0 for name in METRIC_NAMES}
    return {name: float(np.mean([m[name] for m in per_query])) for name in METRIC_NAMES}


def latency_stats(values_ms: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / max in milliseconds (linear interpolation between samples)."""
    if not values_ms:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    arr = np.asarray(values_ms, dtype=np.float64)
    return {
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "max": float(arr.max()),
    }
