"""Confidence of a retrieval: the relevance gate and adaptive top-k.

Relevance is the cosine of the query with the best-ranked hit, whatever mode ranked it: BM25
and fused scores have no absolute scale, a cosine does, so one threshold works for every mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragchat.index.base import SearchableKB, Vector
from ragchat.types import Hit

DEFAULT_HIGH = 0.6
DEFAULT_LOW = 0.4
K_WHEN_HIGH = 3
K_WHEN_LOW = 7


def top_relevance(kb: SearchableKB, query_vec: Vector, hits: Sequence[Hit]) -> float:
    """Cosine of the query with ``hits[0]`` (0.0 when there are no hits)."""
    if not hits:
        return 0.0
    scores = kb.dense_scores(query_vec, [hits[0].chunk.chunk_id])
    return float(scores[0]) if scores else 0.0


def refuses(relevance: float, has_hits: bool, threshold: float | None) -> bool:
    """True when the answerer should say NO_ANSWER: nothing was found, or the best hit is
    less similar to the query than ``threshold`` (None disables the threshold)."""
    if not has_hits:
        return True
    return threshold is not None and relevance < threshold


def adaptive_k(
    relevance: float,
    default_k: int,
    *,
    high: float = DEFAULT_HIGH,
    low: float = DEFAULT_LOW,
) -> int:
    """Few hits when the best one is clearly on topic (less noise for the answerer), more when
    it is weak (the answer may be spread out), ``default_k`` in between."""
    if relevance >= high:
        return K_WHEN_HIGH
    if relevance < low:
        return K_WHEN_LOW
    return default_k
