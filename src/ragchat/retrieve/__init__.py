"""Retrieval: candidates from a knowledge base, fusion, reranking, gating and context building."""

from ragchat.retrieve.expansion import PRFExpander, QueryExpander
from ragchat.retrieve.factory import build_retriever
from ragchat.retrieve.fusion import (
    minmax_normalise,
    rrf_fusion,
    weighted_minmax_fusion,
    weighted_score_fusion,
    zscore_normalise,
)
from ragchat.retrieve.llm_expansion import LLMExpander
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.retrieve.rerank import CrossEncoderReranker, load_reranker
from ragchat.retrieve.selection import retrieve_from_text

__all__ = [
    "CrossEncoderReranker",
    "KBRetriever",
    "LLMExpander",
    "PRFExpander",
    "QueryExpander",
    "build_retriever",
    "load_reranker",
    "minmax_normalise",
    "retrieve_from_text",
    "rrf_fusion",
    "weighted_minmax_fusion",
    "weighted_score_fusion",
    "zscore_normalise",
]
