"""The trained reader as a reranker: a passage scores the probability of its best candidate
sentence or row answering the question, so a passage that holds the answer moves ahead of one
that is only about the same topic. It plays the part of a cross-encoder (``retrieve.base.
Reranker``) with the model the package already ships, where no cross-encoder loads offline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.reader.model import ReaderModel
from ragchat.reader.question import analyse
from ragchat.reader.read import prepare
from ragchat.settings import READER_RERANKER
from ragchat.types import Hit


class ReaderReranker:
    """``rerank(query, hits)``: the hits by their best candidate's P(answers), best first; ties
    (and passages without a candidate, scored 0) keep the order they came in. The fused
    scores stay in ``scores``; ``score`` and ``scores["rerank"]`` are the probability."""

    model_name = READER_RERANKER

    def __init__(self, embedder: Embedder, model: ReaderModel) -> None:
        self.embedder = embedder
        self.model = model

    def scores(self, query: str, hits: Sequence[Hit]) -> list[float]:
        if not hits:
            return []
        # The query vector comes from the embedder's query cache: the pipeline embedded it.
        qv = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        prepared = prepare(analyse(query), hits, self.embedder, query_vector=qv)
        probs = self.model.candidates(prepared.x)
        best = [0.0] * len(hits)
        for cand, p in zip(prepared.cands, probs, strict=True):
            best[cand.hit_rank] = max(best[cand.hit_rank], float(p))
        return best

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        scores = self.scores(query, hits)
        order = sorted(range(len(hits)), key=lambda i: -scores[i])  # stable: ties keep order
        return [
            replace(hits[i], score=scores[i], scores={**hits[i].scores, "rerank": scores[i]})
            for i in order
        ]
