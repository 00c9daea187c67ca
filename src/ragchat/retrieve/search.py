"""First-stage candidates from a knowledge base: dense, BM25, hybrid and dense-first modes.

Kept apart from the pipeline so a second pass (query expansion) can reuse it as is.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragchat.embed.base import Vector
from ragchat.errors import RetrievalError
from ragchat.retrieve.fields import title_index
from ragchat.retrieve.fusion import (
    Ranked,
    rrf_fusion,
    sort_ranked,
    weighted_minmax_fusion,
    weighted_score_fusion,
)
from ragchat.settings import RetrievalSettings
from ragchat.types import Hit
from ragchat.vectorstores.base import SearchableKB, SearchesHybrid

Timings = dict[str, float]
MODES = ("dense", "bm25", "hybrid", "dense_first")


@contextmanager
def time_step(timings: Timings, step: str) -> Iterator[None]:
    """Adds the block's wall time in milliseconds to ``timings[step]`` (accumulating)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[step] = timings.get(step, 0.0) + (time.perf_counter() - start) * 1000.0


def _fuse(
    config: RetrievalSettings,
    dense: list[tuple[str, float]],
    bm25: list[tuple[str, float]],
    title: list[tuple[str, float]] | None = None,
) -> list[tuple[str, float]]:
    if config.fusion == "rrf":
        # A zero BM25 score (dense-first candidates sharing no term) is not a rank: drop it.
        lists = [dense, [(c, s) for c, s in bm25 if s > 0]]
        weights = [1.0, 1.0]
        if title:
            # On the scale of the score fusions: dense + BM25 weigh 1 together there, 2 here.
            lists.append([(c, s) for c, s in title if s > 0])
            weights.append(2.0 * config.title_weight)
        return rrf_fusion(lists, k=config.rrf_k, weights=weights)
    if config.fusion == "minmax" and not title:
        return weighted_minmax_fusion(dense, bm25, config.alpha)
    weighted: list[tuple[Ranked, float]] = [(dense, config.alpha), (bm25, 1.0 - config.alpha)]
    if title:
        weighted.append((title, config.title_weight))
    return weighted_score_fusion(weighted, config.fusion)


def _complete(
    kb: SearchableKB,
    query: str,
    query_vec: Vector,
    dense: list[tuple[str, float]],
    bm25: list[tuple[str, float]],
    timings: Timings,
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """Both lists over the union of their candidates: the cosine of a BM25-only candidate and
    the BM25 score of a dense-only one are looked up rather than left out."""
    in_dense, in_bm25 = {c for c, _ in dense}, {c for c, _ in bm25}
    need_dense = [c for c, _ in bm25 if c not in in_dense]
    need_bm25 = [c for c, _ in dense if c not in in_bm25]
    if need_dense:
        with time_step(timings, "dense"):
            dense = dense + list(
                zip(need_dense, kb.dense_scores(query_vec, need_dense), strict=True)
            )
    if need_bm25:
        with time_step(timings, "bm25"):
            bm25 = bm25 + list(zip(need_bm25, kb.bm25_scores(query, need_bm25), strict=True))
    return dense, bm25


def _titles(
    kb: SearchableKB, query: str, ids: list[str], timings: Timings
) -> list[tuple[str, float]] | None:
    """Title BM25 of the candidates; None when the knowledge base cannot list its titles."""
    with time_step(timings, "title"):
        index = title_index(kb)
        if index is None:
            return None
        return list(zip(ids, index.scores(query, ids), strict=True))


def search_candidates(
    kb: SearchableKB,
    config: RetrievalSettings,
    query: str,
    query_vec: Vector | None,
    filters: Mapping[str, Any] | None,
    timings: Timings,
) -> list[Hit]:
    """Up to ``config.candidates`` hits, best first, with per-retriever scores in
    ``hit.scores`` (``dense``, ``bm25``, ``title``, ``fused``). ``query_vec`` may be None in
    bm25 mode.

    Fused modes honour ``complete_scores`` (hybrid: both scores for every candidate) and
    ``title_weight`` (title BM25 as a third signal; ignored when the knowledge base cannot list
    its chunks' titles)."""
    mode = config.mode
    if mode not in MODES:
        raise RetrievalError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
    n = config.candidates
    dense: list[tuple[str, float]] = []
    bm25: list[tuple[str, float]] = []
    server_fused: list[tuple[str, float]] | None = None
    if mode == "hybrid" and query_vec is not None and isinstance(kb, SearchesHybrid):
        # A remote store answers both lists in one round trip, and fuses RRF itself.
        rrf_k = config.rrf_k if config.fusion == "rrf" and config.title_weight <= 0 else None
        with time_step(timings, "hybrid"):
            dense, bm25, server_fused = kb.hybrid_search(query, query_vec, n, filters, rrf_k=rrf_k)
    elif mode != "bm25":
        if query_vec is None:
            raise RetrievalError(f"mode {mode!r} needs a query embedding")
        with time_step(timings, "dense"):
            dense = kb.dense_search(query_vec, n, filters)
    if mode == "bm25" or (mode == "hybrid" and not isinstance(kb, SearchesHybrid)):
        with time_step(timings, "bm25"):
            bm25 = kb.bm25_search(query, n, filters)
    elif mode == "dense_first":
        # BM25 only re-scores the dense candidates (already filtered), never the collection.
        with time_step(timings, "bm25"):
            ids = [chunk_id for chunk_id, _ in dense]
            bm25 = list(zip(ids, kb.bm25_scores(query, ids), strict=True)) if ids else []
    fused = mode in ("hybrid", "dense_first")
    # RRF ranks each list as returned: completing them would only append ranks past the end.
    complete = config.complete_scores and config.fusion != "rrf"
    if mode == "hybrid" and complete and query_vec is not None:
        dense, bm25 = _complete(kb, query, query_vec, dense, bm25, timings)
    title: list[tuple[str, float]] | None = None
    if fused and config.title_weight > 0:
        ids = list(dict.fromkeys([c for c, _ in dense] + [c for c, _ in bm25]))
        title = _titles(kb, query, ids, timings)
    with time_step(timings, "fusion" if fused else mode):
        if mode == "dense":
            ranked = sort_ranked(dense)
        elif mode == "bm25":
            ranked = sort_ranked(bm25)
        elif server_fused is not None:
            ranked = sort_ranked(server_fused)
        else:
            ranked = _fuse(config, dense, bm25, title)
        return _to_hits(
            kb, ranked[:n], dict(dense), dict(bm25), fused=fused, title=dict(title or [])
        )


def _to_hits(
    kb: SearchableKB,
    ranked: list[tuple[str, float]],
    dense: dict[str, float],
    bm25: dict[str, float],
    *,
    fused: bool,
    title: dict[str, float] | None = None,
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
        if title and title.get(chunk_id, 0.0) > 0:
            scores["title"] = title[chunk_id]
        if fused:
            scores["fused"] = score
        hits.append(Hit(chunk=chunk, score=score, scores=scores))
    return hits
