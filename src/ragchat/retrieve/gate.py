"""Confidence of a retrieval: the relevance gate and adaptive top-k.

Relevance is the best cosine of the query among the first ``window`` ranked hits
(``RetrievalSettings.gate_window``), whatever mode ranked them: BM25, fused and reranker scores
have no absolute scale, a cosine does, so one threshold works for every mode. The order comes
from BM25, fusion or a reranker, not from the cosine, so the first hit is not necessarily the
most similar one: a lexically strong but semantically weak first hit (a "review questions"
list, say) would refuse a question that the second hit answers well. The default window of 3
tolerates that; a window of 1 is the strict reading, "NO_ANSWER when the top-1 hit's cosine is
below the threshold". A wider window would let a stray similar chunk far down the list answer
for a ranking that is off topic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragchat.embed.base import Vector
from ragchat.types import Hit
from ragchat.vectorstores.base import SearchableKB

DEFAULT_HIGH = 0.6
DEFAULT_LOW = 0.4
K_WHEN_HIGH = 3
K_WHEN_LOW = 7
GATE_WINDOW = 3  # the default of RetrievalSettings.gate_window


def top_relevance(
    kb: SearchableKB, query_vec: Vector, hits: Sequence[Hit], window: int = GATE_WINDOW
) -> float:
    """Best cosine of the query with the first ``window`` hits (0.0 when there are none)."""
    if window < 1:
        raise ValueError("window must be >= 1")
    if not hits:
        return 0.0
    scores = kb.dense_scores(query_vec, [h.chunk.chunk_id for h in hits[:window]])
    return float(max(scores)) if scores else 0.0


def refuses(relevance: float, has_hits: bool, threshold: float | None) -> bool:
    """True when the answerer should say NO_ANSWER: nothing was found, or ``relevance`` (see
    ``top_relevance``) is below ``threshold`` (None disables the threshold)."""
    if not has_hits:
        return True
    return threshold is not None and relevance < threshold


# An identifier: letters and digits together ("E5", "F05", "XR-200", "B12"), not a plain word
# or number.
_IDENTIFIER = re.compile(r"\b(?=[A-Za-z-]*\d)(?=[\d-]*[A-Za-z])[A-Za-z0-9-]{2,12}\b")
_TOKEN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def names_identifiers(query: str, hits: Sequence[Hit], window: int = GATE_WINDOW) -> bool:
    """True when ``query`` names identifiers (error codes, model numbers) and one of the first
    ``window`` hits holds every one of them as a word. A MiniLM cosine hardly tells "E5" from
    "E2", so "What does error E5 mean?" can fall below the threshold while the passage that
    says "If it shows E5, …" is ranked first by its exact word: that match is the evidence."""
    wanted = {m.group(0).lower() for m in _IDENTIFIER.finditer(query)}
    if not wanted:
        return False
    return any(wanted <= set(_TOKEN.findall(h.chunk.text.lower())) for h in hits[:window])


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
