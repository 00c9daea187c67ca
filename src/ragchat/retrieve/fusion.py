"""Score fusion over ranked lists of ``(chunk_id, score)``.

Pure functions, so the maths can be tested by hand. Every output is sorted best first with ties
broken by ``chunk_id``: the same query always yields the same ranking, whatever order the
inputs arrived in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Ranked = Sequence[tuple[str, float]]

DEFAULT_RRF_K = 60


def sort_ranked(items: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Best score first, ties by chunk id (the one deterministic order used everywhere)."""
    return sorted(items, key=lambda item: (-item[1], item[0]))


def _best_per_id(ranked: Ranked) -> dict[str, float]:
    """A list may name a chunk twice (e.g. concatenated sources): keep its best score."""
    best: dict[str, float] = {}
    for chunk_id, score in ranked:
        if chunk_id not in best or score > best[chunk_id]:
            best[chunk_id] = score
    return best


def minmax_normalise(ranked: Ranked) -> list[tuple[str, float]]:
    """Rescales scores to [0, 1], keeping the input order.

    When every score is equal there is no spread to rescale: a non-zero score means "all
    matched equally well" (1.0), an all-zero list means "nothing matched" (0.0).
    """
    if not ranked:
        return []
    values = [score for _, score in ranked]
    lo, hi = min(values), max(values)
    if hi == lo:
        same = 1.0 if hi != 0 else 0.0
        return [(chunk_id, same) for chunk_id, _ in ranked]
    span = hi - lo
    return [(chunk_id, (score - lo) / span) for chunk_id, score in ranked]


def weighted_minmax_fusion(dense: Ranked, bm25: Ranked, alpha: float) -> list[tuple[str, float]]:
    """``alpha * norm(dense) + (1 - alpha) * norm(bm25)``; a chunk missing from a list scores 0
    for that component. ``alpha`` weights the dense side: 1.0 is dense only, 0.0 BM25 only."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    norm_dense = dict(minmax_normalise(list(_best_per_id(dense).items())))
    norm_bm25 = dict(minmax_normalise(list(_best_per_id(bm25).items())))
    fused = {
        chunk_id: alpha * norm_dense.get(chunk_id, 0.0)
        + (1.0 - alpha) * norm_bm25.get(chunk_id, 0.0)
        for chunk_id in norm_dense.keys() | norm_bm25.keys()
    }
    return sort_ranked(fused.items())


def rrf_fusion(
    lists: Sequence[Ranked],
    k: int = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: ``sum_i w_i / (k + rank_i)`` with 1-based ranks.

    Each list is ranked by its own scores (ties by chunk id), so callers need not pre-sort and
    only the order, never the scale, of a retriever's scores matters.
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    if weights is None:
        weights = [1.0] * len(lists)
    if len(weights) != len(lists):
        raise ValueError(f"{len(weights)} weights for {len(lists)} lists")
    fused: dict[str, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        ordered = sort_ranked(_best_per_id(ranked).items())
        for rank, (chunk_id, _) in enumerate(ordered, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight / (k + rank)
    return sort_ranked(fused.items())
