"""``KBRetriever``: the retrieval pipeline over one knowledge base.

Steps, each timed in ``result.timings`` (milliseconds) only when it ran:
``embed`` (once per query) → ``dense`` / ``bm25`` / ``title`` / ``fusion`` (the configured
mode) → ``prf`` (optional dense Rocchio feedback: second pass with the moved query vector) →
``expand`` (optional: variations from an LLM or from PRF, searched and multi-query RRF-fused)
→ ``rerank`` (optional) → gate relevance → ``section`` (the section signal,
``retrieve/sections.py``) → adaptive top-k → ``post`` (parents, neighbours, dedupe) →
truncate to top-k; plus ``total``.

Callers MUST check ``result.no_answer``: when the gate fires the hits are still returned (so
evaluation can measure wrong refusals), but they are not evidence for an answer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragchat.embed.base import Vector
from ragchat.errors import RetrievalError
from ragchat.retrieve.base import Reranker
from ragchat.retrieve.expansion import PRFExpander, QueryExpander, run_expander
from ragchat.retrieve.feedback import feedback_vectors, rocchio
from ragchat.retrieve.fusion import rrf_fusion
from ragchat.retrieve.gate import (
    DEFAULT_HIGH,
    DEFAULT_LOW,
    K_WHEN_LOW,
    adaptive_k,
    names_identifiers,
    refuses,
    top_relevance,
)
from ragchat.retrieve.postprocess import expand_neighbours, resolve_parents
from ragchat.retrieve.search import Timings, search_candidates, time_step
from ragchat.retrieve.sections import boost_sections, question_aspects
from ragchat.retrieve.selection import retrieve_from_text
from ragchat.settings import RetrievalSettings
from ragchat.types import Hit, RetrievalResult
from ragchat.vectorstores.base import SearchableKB


def fuse_passes(passes: Sequence[Sequence[Hit]], k: int, limit: int) -> list[Hit]:
    """Multi-query fusion: RRF over the rankings of several passes. A chunk keeps the component
    scores of the first pass that found it; ``score`` and ``scores["multi_query"]`` are RRF."""
    first: dict[str, Hit] = {}
    for hits in passes:
        for hit in hits:
            first.setdefault(hit.chunk.chunk_id, hit)
    ranked = rrf_fusion([[(h.chunk.chunk_id, h.score) for h in hits] for hits in passes], k=k)
    return [
        replace(first[cid], score=s, scores={**first[cid].scores, "multi_query": s})
        for cid, s in ranked[:limit]
    ]


class KBRetriever:
    """Retriever over a ``SearchableKB`` configured by ``RetrievalSettings``.

    ``reranker`` is used when ``config.rerank`` is on; it re-scores the best
    ``rerank_candidates`` hits and drops the rest (their fused scores are on another scale).
    ``expander`` (default ``PRFExpander``; ``build_retriever`` passes an ``LLMExpander`` when a
    chat model is configured) is used when ``config.query_expansion`` is on; it runs when the
    first pass's relevance is below ``expand_below`` (or always, with ``always_expand``).
    Relevance is the gate's: the best cosine among the first ``config.gate_window`` hits.
    ``adaptive_high`` / ``adaptive_low`` are the relevance bounds of adaptive top-k.
    """

    def __init__(
        self,
        kb: SearchableKB,
        config: RetrievalSettings,
        reranker: Reranker | None = None,
        expander: QueryExpander | None = None,
        *,
        rerank_candidates: int = 30,
        adaptive_high: float = DEFAULT_HIGH,
        adaptive_low: float = DEFAULT_LOW,
        expand_below: float = 0.5,
        always_expand: bool = False,
    ) -> None:
        if rerank_candidates < 1:
            raise ValueError("rerank_candidates must be >= 1")
        if adaptive_low > adaptive_high:
            raise ValueError("adaptive_low must not exceed adaptive_high")
        self.kb = kb
        self.config = config
        self.reranker = reranker
        self.expander = expander if expander is not None else PRFExpander()
        self.rerank_candidates = rerank_candidates
        self.adaptive_high = adaptive_high
        self.adaptive_low = adaptive_low
        self.expand_below = expand_below
        self.always_expand = always_expand

    def retrieve(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        query_vector: Vector | None = None,
    ) -> RetrievalResult:
        """``query_vector``: ``query`` already embedded by this knowledge base's embedding
        model (a chat turn embeds its message once, ``Turn.embedding``)."""
        start = time.perf_counter()
        if not query.strip():
            raise RetrievalError("the query is empty")
        cfg = self.config
        k = cfg.top_k if top_k is None else top_k
        if k < 1:
            raise RetrievalError(f"top_k must be >= 1, got {k}")
        timings: Timings = {}
        result = RetrievalResult(query=query, hits=[], mode=cfg.mode, timings=timings)

        with time_step(timings, "embed"):  # also needed in bm25 mode: the gate is a cosine
            query_vec = (
                self.kb.embedder.embed_query(query) if query_vector is None else query_vector
            )
        hits = search_candidates(self.kb, cfg, query, query_vec, filters, timings)
        if cfg.prf_docs > 0 and cfg.mode != "bm25" and hits:
            with time_step(timings, "prf"):
                hits = self._dense_feedback(query, query_vec, hits, filters)
        result.hits = hits

        if cfg.query_expansion and hits:
            first_relevance = top_relevance(self.kb, query_vec, hits, cfg.gate_window)
            if self.always_expand or first_relevance < self.expand_below:
                with time_step(timings, "expand"):
                    hits = self._expand(query, result, filters)

        if cfg.rerank and self.reranker is not None and hits:
            window = max(self.rerank_candidates, k, K_WHEN_LOW if cfg.adaptive_top_k else 0)
            with time_step(timings, "rerank"):
                reranked = self.reranker.rerank(query, hits[:window])
                # by score, stably: ties keep the order the reranker gave (its own tie rule)
                hits = sorted(
                    [replace(h, scores={"rerank": h.score, **h.scores}) for h in reranked],
                    key=lambda h: -h.score,
                )
        elif cfg.rerank and self.reranker is None:
            result.notes.append("rerank skipped: no reranker loaded")

        # The gate judges whether the knowledge base covers the question at all, before the
        # section signal picks where in a document the answer is.
        relevance = top_relevance(self.kb, query_vec, hits, cfg.gate_window)
        exact = names_identifiers(query, hits, cfg.gate_window)
        if cfg.section_weight > 0 and hits and question_aspects(query):
            with time_step(timings, "section"):
                hits = boost_sections(query, hits, cfg.section_weight)
        if cfg.adaptive_top_k:
            k = adaptive_k(relevance, k, high=self.adaptive_high, low=self.adaptive_low)
            result.notes.append(f"adaptive top_k={k} (relevance {relevance:.3f})")

        if cfg.parents or cfg.neighbours:
            with time_step(timings, "post"):
                hits = resolve_parents(self.kb, hits, k) if cfg.parents else hits[:k]
                if cfg.neighbours:
                    hits = expand_neighbours(
                        self.kb, query_vec, hits, cfg.neighbour_floor, parents=cfg.parents
                    )
        result.hits = hits[:k]
        result.relevance = relevance
        result.no_answer = refuses(relevance, bool(result.hits), cfg.gate_threshold)
        if result.no_answer and result.hits and exact:
            result.no_answer = False
            result.notes.append(
                f"gate: relevance {relevance:.3f} below threshold {cfg.gate_threshold}, "
                "but a passage names the question's identifiers"
            )
        if result.no_answer:
            result.notes.append(
                f"gate: relevance {relevance:.3f} below threshold {cfg.gate_threshold}"
                if result.hits
                else "gate: no hits"
            )
        timings["total"] = (time.perf_counter() - start) * 1000.0
        return result

    def _dense_feedback(
        self,
        query: str,
        query_vec: Vector,
        hits: list[Hit],
        filters: Mapping[str, Any] | None,
    ) -> list[Hit]:
        """Rocchio: search again with the query vector moved towards the top ``prf_docs``
        hits (the gate keeps using the original query's cosine)."""
        cfg = self.config
        feedback = feedback_vectors(self.kb, [h.chunk for h in hits[: cfg.prf_docs]])
        moved = rocchio(query_vec, feedback, cfg.prf_weight)
        scratch: Timings = {}
        return search_candidates(self.kb, cfg, query, moved, filters, scratch)

    def _expand(
        self, query: str, result: RetrievalResult, filters: Mapping[str, Any] | None
    ) -> list[Hit]:
        """Searches every variation the expander proposes and RRF-fuses them with the first
        pass; the second passes' own step timings are folded into ``expand``, and a note says
        which method produced the variations (an LLM expander may have fallen back to PRF)."""
        expansion = run_expander(self.expander, query, result)
        variants = [v for v in dict.fromkeys(expansion.variants) if v.strip() and v != query]
        result.expanded_queries = variants
        if not variants:
            result.notes.append(f"expansion ({expansion.method}): no variation proposed")
            return result.hits
        result.notes.append(f"expansion ({expansion.method}): {len(variants)} variation(s)")
        passes = [result.hits]
        scratch: Timings = {}
        for variant in variants:
            vec = None if self.config.mode == "bm25" else self.kb.embedder.embed_query(variant)
            passes.append(search_candidates(self.kb, self.config, variant, vec, filters, scratch))
        return fuse_passes(passes, self.config.rrf_k, self.config.candidates)

    def retrieve_from_text(self, query: str, passage: str) -> RetrievalResult:
        """Selected-text mode: ``passage`` is the only context; the knowledge base is not
        searched (see ``ragchat.retrieve.selection``)."""
        return retrieve_from_text(self.kb.embedder, query, passage)
