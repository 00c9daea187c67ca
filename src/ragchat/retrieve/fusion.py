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


def zscore_normalise(ranked: Ranked) -> list[tuple[str, float]]:
    """Standard scores ``(s - mean) / std``, keeping the input order.

    Unlike min-max, one outlier (a BM25 score far above the rest) does not squash every other
    score towards 0. With no spread (one item, or all equal) every score becomes 0.0.
    """
    if not ranked:
        return []
    values = [score for _, score in ranked]
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if std == 0.0:
        return [(chunk_id, 0.0) for chunk_id, _ in ranked]
    return [(chunk_id, (score - mean) / std) for chunk_id, score in ranked]


NORMALISERS = {"minmax": minmax_normalise, "zscore": zscore_normalise}


def weighted_score_fusion(
    lists: Sequence[tuple[Ranked, float]], normalisation: str = "minmax"
) -> list[tuple[str, float]]:
    """``sum_i w_i * norm_i(score)`` over several ``(ranked list, weight)`` pairs.

    Each list is normalised on its own (``"minmax"`` or ``"zscore"``). A chunk missing from a
    list scores "below everything it returned": 0 under min-max (so ``weighted_minmax_fusion``
    is the two-list special case), the list's lowest z-score under z-score (one standard
    deviation below its members when they all scored the same).
    """
    if normalisation not in NORMALISERS:
        raise ValueError(f"unknown normalisation {normalisation!r}; use minmax or zscore")
    norm = NORMALISERS[normalisation]
    normed: list[tuple[dict[str, float], float, float]] = []
    for ranked, weight in lists:
        if weight < 0:
            raise ValueError(f"weights must be >= 0, got {weight}")
        scores = dict(norm(list(_best_per_id(ranked).items())))
        floor = 0.0
        if normalisation == "zscore" and scores:
            low, high = min(scores.values()), max(scores.values())
            floor = low if high > low else low - 1.0
        normed.append((scores, weight, floor))
    ids = set().union(*(scores.keys() for scores, _, _ in normed))
    fused = {
        chunk_id: sum(w * scores.get(chunk_id, floor) for scores, w, floor in normed)
        for chunk_id in ids
    }
    return sort_ranked(fused.items())
