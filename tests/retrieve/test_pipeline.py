from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import RetrievalError
from ragchat.retrieve import KBRetriever
from ragchat.retrieve.base import Reranker, Retriever
from ragchat.settings import RetrievalSettings
from ragchat.types import Hit
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .helpers import SpyKB

MODES = ["dense", "bm25", "hybrid", "dense_first"]


def settings(**overrides: Any) -> RetrievalSettings:
    """Plain ranking by default: no parents, no gate, so tests see raw child hits."""
    base: dict[str, Any] = {"parents": False, "gate_threshold": None, "rerank": False}
    return RetrievalSettings(**{**base, **overrides})


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk.chunk_id for h in hits]


def test_is_a_retriever(kb: KnowledgeBase) -> None:
    assert isinstance(KBRetriever(kb, settings()), Retriever)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("query", "best"),
    [("Mars planet atmosphere", "space:c1"), ("cat fur", "pets:c1"), ("yeast", "kitchen:c1")],
)
def test_every_mode_ranks_the_matching_chunk_first(
    kb: KnowledgeBase, mode: str, query: str, best: str
) -> None:
    result = KBRetriever(kb, settings(mode=mode)).retrieve(query)
    assert result.mode == mode
    assert ids(result.hits)[0] == best
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_bm25_mode_returns_only_term_matches(kb: KnowledgeBase) -> None:
    result = KBRetriever(kb, settings(mode="bm25", top_k=10)).retrieve("Mars planet")
    assert ids(result.hits) == ["space:c1", "space:c2"]
    assert all(set(h.scores) == {"bm25"} for h in result.hits)


def test_hybrid_minmax_scores_are_the_weighted_components(kb: KnowledgeBase) -> None:
    result = KBRetriever(kb, settings(mode="hybrid", alpha=0.7, top_k=10)).retrieve("Mars planet")
    dense = [h.scores["dense"] for h in result.hits]
    bm25 = [h.scores.get("bm25", 0.0) for h in result.hits]
    lo_d, hi_d = min(dense), max(dense)
    hi_b = max(bm25)
    lo_b = min(h.scores["bm25"] for h in result.hits if "bm25" in h.scores)
    for hit in result.hits:
        nd = (hit.scores["dense"] - lo_d) / (hi_d - lo_d)
        nb = (hit.scores["bm25"] - lo_b) / (hi_b - lo_b) if "bm25" in hit.scores else 0.0
        assert hit.score == pytest.approx(0.7 * nd + 0.3 * nb)
        assert hit.scores["fused"] == hit.score


def test_hybrid_rrf(kb: KnowledgeBase) -> None:
    result = KBRetriever(kb, settings(fusion="rrf", rrf_k=10)).retrieve("Mars planet")
    top = result.hits[0]
    assert top.chunk.chunk_id == "space:c1"
    assert top.score == pytest.approx(2 / 11)  # rank 1 in both lists


def test_alpha_one_ranks_like_dense(kb: KnowledgeBase) -> None:
    dense = KBRetriever(kb, settings(mode="dense", top_k=8)).retrieve("cat fur")
    hybrid = KBRetriever(kb, settings(mode="hybrid", alpha=1.0, top_k=8)).retrieve("cat fur")
    assert ids(hybrid.hits) == ids(dense.hits)


@pytest.mark.parametrize("mode", MODES)
def test_filters_restrict_results(kb: KnowledgeBase, mode: str) -> None:
    retriever = KBRetriever(kb, settings(mode=mode, top_k=10))
    by_chapter = retriever.retrieve("planet cat bread", filters={"chapter": "astronomy"})
    assert by_chapter.hits and {h.chunk.doc_id for h in by_chapter.hits} == {"space"}
    by_doc = retriever.retrieve("planet cat bread", filters={"doc_id": ["pets", "kitchen"]})
    assert by_doc.hits and {h.chunk.doc_id for h in by_doc.hits} <= {"pets", "kitchen"}
    assert "space" not in {h.chunk.doc_id for h in by_doc.hits}


def test_filters_are_passed_to_kb_searches(kb: KnowledgeBase) -> None:
    spy = SpyKB(kb)
    KBRetriever(spy, settings(mode="hybrid")).retrieve("cat", filters={"source": "pets.md"})
    assert spy.called("dense_search") == [(100, {"source": "pets.md"})]
    assert spy.called("bm25_search") == [("cat", 100, {"source": "pets.md"})]


def test_dense_first_bm25_scores_only_dense_candidates(kb: KnowledgeBase) -> None:
    spy = SpyKB(kb)
    config = settings(mode="dense_first", candidates=3, top_k=10)
    result = KBRetriever(spy, config).retrieve("Mars planet atmosphere")
    dense_top3 = ids(
        KBRetriever(kb, settings(mode="dense", top_k=3)).retrieve("Mars planet atmosphere").hits
    )
    assert spy.called("bm25_search") == []
    assert spy.called("bm25_scores") == [dense_top3]
    assert set(ids(result.hits)) <= set(dense_top3)
    assert all("dense" in h.scores and "bm25" in h.scores for h in result.hits)
    assert set(result.timings) == {"embed", "dense", "bm25", "fusion", "total"}


def test_timings_record_only_steps_that_ran(kb: KnowledgeBase) -> None:
    hybrid = KBRetriever(kb, settings(mode="hybrid", parents=True)).retrieve("cat")
    assert set(hybrid.timings) == {"embed", "dense", "bm25", "fusion", "post", "total"}
    dense = KBRetriever(kb, settings(mode="dense")).retrieve("cat")
    assert set(dense.timings) == {"embed", "dense", "total"}
    bm25 = KBRetriever(kb, settings(mode="bm25")).retrieve("cat")
    assert set(bm25.timings) == {"embed", "bm25", "total"}
    assert all(v >= 0 for v in hybrid.timings.values())
    assert hybrid.timings["total"] >= hybrid.timings["dense"]


def test_top_k_truncates(kb: KnowledgeBase) -> None:
    retriever = KBRetriever(kb, settings(mode="dense"))
    assert len(retriever.retrieve("cat").hits) == 5  # config default
    assert len(retriever.retrieve("cat", top_k=2).hits) == 2


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_is_rejected(kb: KnowledgeBase, query: str) -> None:
    with pytest.raises(RetrievalError):
        KBRetriever(kb, settings()).retrieve(query)


def test_bad_top_k_and_mode_are_rejected(kb: KnowledgeBase) -> None:
    with pytest.raises(RetrievalError):
        KBRetriever(kb, settings()).retrieve("cat", top_k=0)
    bogus = RetrievalSettings.model_construct(mode="bogus")  # bypasses validation
    with pytest.raises(RetrievalError, match="unknown retrieval mode"):
        KBRetriever(kb, bogus).retrieve("cat")


# -- reranking ------------------------------------------------------------------------------
class LengthReranker:
    """Scores by text length: an order unrelated to the first stage, easy to predict."""

    model_name = "length"

    def __init__(self) -> None:
        self.seen: list[int] = []

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        self.seen.append(len(hits))
        out = [replace(h, score=float(len(h.chunk.text))) for h in hits]
        return sorted(out, key=lambda h: -h.score)


def test_reranker_reorders_top_candidates(kb: KnowledgeBase) -> None:
    reranker = LengthReranker()
    assert isinstance(reranker, Reranker)
    retriever = KBRetriever(
        kb, settings(mode="dense", rerank=True), reranker=reranker, rerank_candidates=4
    )
    first_stage = KBRetriever(kb, settings(mode="dense", top_k=4)).retrieve("cat fur")
    result = retriever.retrieve("cat fur", top_k=3)
    assert reranker.seen == [4]  # only the rerank window is scored
    expected = sorted(first_stage.hits, key=lambda h: (-len(h.chunk.text), h.chunk.chunk_id))
    assert ids(result.hits) == ids(expected)[:3]
    for hit in result.hits:
        assert hit.scores["rerank"] == float(len(hit.chunk.text)) == hit.score
        assert "dense" in hit.scores  # first-stage components are kept
    assert "rerank" in result.timings


class TiedReranker:
    """Every hit ties, handed back in reverse: the pipeline must keep the reranker's order."""

    model_name = "tied"

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        return [replace(h, score=1.0) for h in reversed(hits)]


def test_the_rerankers_order_is_kept_for_ties(kb: KnowledgeBase) -> None:
    first = KBRetriever(kb, settings(mode="dense", top_k=4)).retrieve("cat fur")
    retriever = KBRetriever(
        kb, settings(mode="dense", rerank=True), reranker=TiedReranker(), rerank_candidates=4
    )
    result = retriever.retrieve("cat fur", top_k=4)
    assert ids(result.hits) == ids(first.hits)[::-1]
    assert ids(result.hits) != sorted(ids(result.hits))  # not re-sorted by chunk id


def test_rerank_off_or_missing(kb: KnowledgeBase) -> None:
    reranker = LengthReranker()
    off = KBRetriever(kb, settings(rerank=False), reranker=reranker).retrieve("cat")
    assert reranker.seen == [] and "rerank" not in off.timings
    missing = KBRetriever(kb, settings(rerank=True)).retrieve("cat")
    assert "rerank" not in missing.timings
    assert any("no reranker" in n for n in missing.notes)


# -- parents and neighbours -------------------------------------------------------------------
def test_parent_resolution_dedupes_by_parent(kb: KnowledgeBase) -> None:
    plain = KBRetriever(kb, settings(mode="dense", top_k=10)).retrieve("cat fur")
    assert ids(plain.hits)[:2] == ["pets:c1", "pets:c0"]  # both children of pets:p0

    result = KBRetriever(kb, settings(mode="dense", parents=True, top_k=10)).retrieve("cat fur")
    parents = [h.chunk.parent_id for h in result.hits]
    assert len(parents) == len(set(parents)) == 5  # five parents in the corpus
    top = result.hits[0]
    assert top.chunk.chunk_id == "pets:c1"  # the better-scored child of the shared parent
    assert "pets:c0" not in ids(result.hits)
    (parent,) = kb.get_chunks(["pets:p0"])
    assert top.context == parent.text
    assert top.context_ids == ("pets:p0",)


def test_top_k_applies_after_dedupe(kb: KnowledgeBase) -> None:
    result = KBRetriever(kb, settings(mode="dense", parents=True)).retrieve("cat fur", top_k=3)
    assert len(result.hits) == 3
    assert len({h.chunk.parent_id for h in result.hits}) == 3


def _text(kb: KnowledgeBase, chunk_id: str) -> str:
    return kb.get_chunks([chunk_id])[0].text


def test_neighbours_kept_above_floor(kb: KnowledgeBase) -> None:
    config = settings(mode="dense", neighbours=True, neighbour_floor=0.0, top_k=3)
    result = KBRetriever(kb, config).retrieve("cat fur")
    plain = KBRetriever(kb, settings(mode="dense", top_k=3)).retrieve("cat fur")
    assert ids(result.hits) == ids(plain.hits)  # neighbours are not extra hits
    top = result.hits[0]
    assert top.chunk.chunk_id == "pets:c1"
    assert top.context_ids == ("pets:c0", "pets:c1", "pets:c2")
    assert top.context == "\n".join(_text(kb, c) for c in top.context_ids)
    assert "post" in result.timings


def test_neighbours_dropped_below_floor(kb: KnowledgeBase) -> None:
    config = settings(mode="dense", neighbours=True, neighbour_floor=1.01)
    top = KBRetriever(kb, config).retrieve("cat fur").hits[0]
    assert top.context_ids == ("pets:c1",)
    assert top.context == _text(kb, "pets:c1")


def test_neighbour_floor_is_per_neighbour(kb: KnowledgeBase) -> None:
    qvec = kb.embedder.embed_query("cat fur")
    prev_sim, next_sim = kb.dense_scores(qvec, ["pets:c0", "pets:c2"])
    assert prev_sim != next_sim
    floor = (prev_sim + next_sim) / 2
    keep = "pets:c0" if prev_sim > next_sim else "pets:c2"
    config = settings(mode="dense", neighbours=True, neighbour_floor=floor)
    top = KBRetriever(kb, config).retrieve("cat fur").hits[0]
    assert set(top.context_ids) == {"pets:c1", keep}


def test_parents_win_over_neighbours_inside_the_parent(kb: KnowledgeBase) -> None:
    config = settings(mode="dense", parents=True, neighbours=True, neighbour_floor=0.0)
    top = KBRetriever(kb, config).retrieve("cat fur").hits[0]
    assert top.chunk.chunk_id == "pets:c1"
    # pets:c0 is inside pets:p0 (skipped); pets:c2 belongs to pets:p1 (appended after).
    assert top.context_ids == ("pets:p0", "pets:c2")
    assert top.context == _text(kb, "pets:p0") + "\n" + _text(kb, "pets:c2")


def test_a_precomputed_query_vector_is_used_instead_of_embedding_the_query(
    kb: KnowledgeBase,
) -> None:
    """A chat turn embeds its message once and hands the vector down (``Turn.embedding``)."""
    embedder = kb.embedder
    assert isinstance(embedder, HashingEmbedder)
    query = "Mars planet atmosphere"
    vector = embedder.embed_query(query)
    embedder.embedded.clear()
    retriever = KBRetriever(kb, settings(mode="dense"))
    given = retriever.retrieve(query, query_vector=vector)
    assert embedder.embedded[query] == 0
    assert ids(given.hits) == ids(retriever.retrieve(query).hits)
    assert embedder.embedded[query] == 1  # without one, the query is embedded
    # The vector decides the dense search: another question's vector finds its passage.
    other = retriever.retrieve(query, query_vector=embedder.embed_query("cat fur"))
    assert ids(other.hits)[0] == "pets:c1"
