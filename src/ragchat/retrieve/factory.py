"""Builds the configured retriever for a knowledge base (what the CLI, eval and agents call)."""

from __future__ import annotations

from ragchat.llm.base import ChatModel
from ragchat.retrieve.base import Reranker
from ragchat.retrieve.expansion import QueryExpander
from ragchat.retrieve.llm_expansion import LLMExpander
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.retrieve.rerank import load_reranker
from ragchat.settings import RetrievalSettings, Settings
from ragchat.vectorstores.base import SearchableKB

# One load per (model, allow_downloads) per process: eval builds a retriever per configuration.
_rerankers: dict[tuple[str, bool], tuple[Reranker | None, str]] = {}


def shared_reranker(settings: Settings) -> tuple[Reranker | None, str]:
    """``load_reranker`` memoised, so a model (or the reason it failed) is loaded once."""
    key = (settings.reranker.model, settings.allow_downloads)
    if key not in _rerankers:
        _rerankers[key] = load_reranker(settings)
    return _rerankers[key]


def build_retriever(
    settings: Settings,
    kb: SearchableKB,
    config: RetrievalSettings | None = None,
    chat_model: ChatModel | None = None,
    *,
    reranker: Reranker | None = None,
) -> KBRetriever:
    """A ``KBRetriever`` over ``kb`` with ``config`` (default ``settings.retrieval``); the
    reranker is loaded only when the configuration asks for reranking. With query expansion
    on, variations come from ``chat_model`` when given (PRF when it fails), else from PRF.
    ``reranker`` replaces the configured cross-encoder (the layers above build the reader's,
    ``agents.rerankers``)."""
    config = config if config is not None else settings.retrieval
    if not config.rerank:
        reranker = None
    elif reranker is None:
        reranker = shared_reranker(settings)[0]
    expander: QueryExpander | None = None
    if config.query_expansion and chat_model is not None:
        expander = LLMExpander(
            chat_model,
            n_variants=config.expansion_variants,
            timeout_s=settings.llm.timeout_s,
            options=settings.llm.options_for("expand"),
        )
    return KBRetriever(
        kb,
        config,
        reranker=reranker,
        expander=expander,
        rerank_candidates=settings.reranker.candidates,
    )
