"""First-stage candidates from a knowledge base: dense, BM25, hybrid and dense-first modes.

Kept apart from the pipeline so a second pass (query expansion) can reuse it as is.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragchat.errors import RetrievalError
from ragchat.index.base import SearchableKB, Vector
from ragchat.retrieve.fusion import rrf_fusion, sort_ranked, weighted_minmax_fusion
from ragchat.settings import RetrievalSettings
from ragchat.types import Hit

Timings = dict[str, float]
MODES = ("dense", "bm25", "hybrid", "dense_first")


@contextmanager
def timed(timings: Timings, step: str) -> Iterator[None]:
    """Adds the block's wall time in milliseconds to ``timings[step]`` (accumulating)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[step] = timings.get(step, 0.0) + (time.perf_counter() - start) * 1000.0


def _fuse(
    config: RetrievalSettings, dense: list[tuple[str, float]], bm25: list[tuple[str, float]]
) -> list[tuple[str, float]]:
    if config.fusion == "rrf":
        # A zero BM25 score (dense-first candidates sharing no term) is not a rank: drop it.
        return rrf_fusion([dense, [(c, s) for c, s in bm25 if s > 0]], k=config.rrf_k)
    return weighted_minmax_fusion(dense, bm25, config.alpha)


def search_candidates(
    kb: SearchableKB,
    config: RetrievalSettings,
    query: str,
    query_vec: Vector | None,
    filters: Mapping[str, Any] | None,
    timings: Timings,
) -> list[Hit]:
    """Up to ``config.candidates`` hits, best first, with per-retriever scores in
    ``hit.scores`` (``dense``, ``bm25``, ``fused``). ``query_vec`` may be None in bm25 mode."""
    mode = config.mode
    if mode not in MODES:
        raise RetrievalError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
    n = config.candidates
    dense: list[tuple[str, float]] = []
    bm25: list[tuple[str, float]] = []
    if mode != "bm25":
        if query_vec is None:
            raise RetrievalError(f"mode {mode!r} needs a query embedding")
        with timed(timings, "dense"):
            dense = kb.dense_search(query_vec, n, filters)
    if mode in ("bm25", "hybrid"):
        with timed(timings, "bm25"):
            bm25 = kb.bm25_search(query, n, filters)
    elif mode == "dense_first":
        # BM25 only re-scores the dense candidates (already filtered), never the collection.
        with timed(timings, "bm25"):
            ids = [chunk_id for chunk_id, _ in dense]
            bm25 = list(zip(ids, kb.bm25_scores(query, ids), strict=True)) if ids else []
    step = "fusion" if mode in ("hybrid", "dense_first") else mode
    with timed(timings, step):
        if mode == "dense":
            ranked = sort_ranked(dense)
        elif mode == "bm25":
            ranked = sort_ranked(bm25)
        else:
            ranked = _fuse(config, dense, bm25)
        return _to_hits(kb, ranked[:n], dict(dense), dict(bm25), fused=step == "fusion")


def _to_hits(
    kb: SearchableKB,
    ranked: list[tuple[str, float]],
    dense: dict[str, float],
    bm25: dict[str, float],
    *,
    fused: bool,
) -> list[Hit]:
    chunks = {c.chunk_id: c for c in kb.get_chunks([chunk_id for chunk_id, _ in ranked])}
    hits: list[Hit] = []
    for chunk_id, score in ranked:
        chunk = chunks.get(chunk_id)
        if chunk is None:  # deleted between search and fetch: nothing to show
            continue
        scores: dict[str, float] = {}
        if chunk_id in dense:
            scores["dense"] = dense[chunk_id]
        if chunk_id in bm25:
            scores["bm25"] = bm25[chunk_id]
        if fused:
            scores["fused"] = score
        hits.append(Hit(chunk=chunk, score=score, scores=scores))
    return hits
