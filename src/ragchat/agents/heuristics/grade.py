"""Offline document grading and query rewriting for the corrective-RAG loop.

``grade_documents`` turns retrieval scores into a relevance in [0, 1]. The dense cosine of
all-MiniLM-L6-v2 goes through a piecewise-linear map calibrated on the sample knowledge bases
(answering passages sit around 0.5-0.75, topical-but-wrong ones around 0.3, unrelated text
below 0.2)::

    cosine  0.0   0.2   0.3   0.45  0.6   0.8   1.0
    grade   0.02  0.10  0.35  0.55  0.72  0.90  0.98

so the corrective graph's "keep ≥ 0.5, need mean ≥ 0.6" means "cosine above ~0.41, on average
above ~0.49": a question the corpus only brushes against (best cosines ~0.45) triggers a retry.
A cross-encoder score (``scores["rerank"]``, a logit) becomes ``sigmoid(logit)`` and is averaged
with the dense grade when both exist. With neither, the fused score's share of the best hit's
score, discounted by rank, and (when ``query`` is given) the query's word coverage stand in.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace

from ragchat.reader.text import WEAK_STEMS, content_stems, split_sentences
from ragchat.retrieve.expansion import PRFExpander
from ragchat.types import Hit, RetrievalResult

COSINE_POINTS: tuple[tuple[float, float], ...] = (
    (0.0, 0.02),
    (0.2, 0.10),
    (0.3, 0.35),
    (0.45, 0.55),
    (0.6, 0.72),
    (0.8, 0.90),
    (1.0, 0.98),
)
_XS = [x for x, _ in COSINE_POINTS]


def cosine_grade(cosine: float) -> float:
    """Piecewise-linear map of a MiniLM cosine to a relevance grade (see module docstring)."""
    if cosine <= _XS[0]:
        return COSINE_POINTS[0][1]
    if cosine >= _XS[-1]:
        return COSINE_POINTS[-1][1]
    i = bisect_right(_XS, cosine) - 1
    (x0, y0), (x1, y1) = COSINE_POINTS[i], COSINE_POINTS[i + 1]
    return y0 + (y1 - y0) * (cosine - x0) / (x1 - x0)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _coverage(query: str, text: str) -> float:
    q = {s for s in content_stems(query) if s not in WEAK_STEMS}
    return len(q & content_stems(text)) / len(q) if q else 0.0


def grade_documents(hits: Sequence[Hit], query: str | None = None) -> list[float]:
    """One relevance grade in [0, 1] per hit, in the hits' order."""
    best = max((h.score for h in hits), default=0.0)
    grades: list[float] = []
    for rank, hit in enumerate(hits, start=1):
        parts: list[float] = []
        if "dense" in hit.scores:
            parts.append(cosine_grade(float(hit.scores["dense"])))
        if "rerank" in hit.scores:
            parts.append(_sigmoid(float(hit.scores["rerank"])))
        if parts:
            grade = sum(parts) / len(parts)
        else:
            share = max(hit.score, 0.0) / best if best > 0 else 0.0
            grade = 0.6 * share / math.sqrt(rank)
            if query:
                grade = 0.5 * grade + 0.5 * _coverage(query, hit.context or hit.chunk.text)
        grades.append(round(min(1.0, max(0.0, grade)), 4))
    return grades


def _plain(text: str) -> str:
    return " ".join(split_sentences(text, speakers=False))


def rewrite_query(query: str, hits: Sequence[Hit], *, n_terms: int = 4) -> str:
    """The query plus up to ``n_terms`` pseudo-relevance-feedback terms from the top hits
    (``PRFExpander``); unchanged when the hits offer nothing new."""
    if not hits or not query.strip():
        return query
    expander = PRFExpander(feedback_docs=3, n_terms=n_terms)
    # Feedback from the readable text only: no speaker names, Markdown or headings.
    cleaned = [replace(h, chunk=replace(h.chunk, text=_plain(h.chunk.text))) for h in hits]
    extra = expander.expansion_terms(query, RetrievalResult(query=query, hits=cleaned))
    return f"{query} {' '.join(extra)}" if extra else query
