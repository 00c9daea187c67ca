"""Selected-text mode: the user's passage is the whole context and no knowledge base is searched."""

from __future__ import annotations

import time

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.errors import RetrievalError
from ragchat.retrieve.gate import refuses
from ragchat.retrieve.search import time_step
from ragchat.types import Chunk, Hit, RetrievalResult

SELECTION_ID = "selection"


def retrieve_from_text(
    embedder: Embedder, query: str, passage: str, *, gate_threshold: float | None = None
) -> RetrievalResult:
    """One synthetic hit (chunk id ``"selection"``) holding ``passage``.

    ``relevance`` is the cosine of query and passage. The gate is off by default: the user chose
    the text, and requests like "summarise this" are legitimately dissimilar to it.
    """
    start = time.perf_counter()
    if not query.strip():
        raise RetrievalError("the query is empty")
    if not passage.strip():
        raise RetrievalError("the selected passage is empty")
    timings: dict[str, float] = {}
    with time_step(timings, "embed"):
        query_vec = embedder.embed_query(query)
        passage_vec = embedder.embed_documents([passage])[0]
    relevance = float(np.dot(query_vec, passage_vec))
    chunk = Chunk(
        chunk_id=SELECTION_ID,
        doc_id=SELECTION_ID,
        text=passage,
        position=0,
        metadata={"source": SELECTION_ID},
    )
    hit = Hit(
        chunk=chunk,
        score=relevance,
        scores={"dense": relevance},
        context=passage,
        context_ids=(SELECTION_ID,),
    )
    timings["total"] = (time.perf_counter() - start) * 1000.0
    return RetrievalResult(
        query=query,
        hits=[hit],
        no_answer=refuses(relevance, True, gate_threshold),
        relevance=relevance,
        mode=SELECTION_ID,
        timings=timings,
    )
