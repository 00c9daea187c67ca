"""The configured reranker and the retrievers built with it, for chat and for every command
that searches: the one place above ``retrieve/`` (which may not import the reader) that can
choose the trained reader (``reranker.model = "reader"``) or the cross-encoder."""

from __future__ import annotations

from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatModel
from ragchat.reader.model import shipped
from ragchat.reader.rerank import ReaderReranker
from ragchat.retrieve.base import Reranker
from ragchat.retrieve.factory import build_retriever, shared_reranker
from ragchat.retrieve.pipeline import KBRetriever
from ragchat.settings import READER_RERANKER, RetrievalSettings, Settings
from ragchat.vectorstores.base import SearchableKB


def configured_reranker(settings: Settings, embedder: Embedder) -> tuple[Reranker | None, str]:
    """``(reranker, status)`` as ``retrieve.factory.shared_reranker``; the reader reranks
    with ``embedder`` (the knowledge base's, so the query vector is the one searched with)
    and the reader model the agents answer with."""
    if settings.reranker.model.strip() != READER_RERANKER:
        return shared_reranker(settings)
    folder = settings.agents.reader_model
    model = shipped(folder) if folder else shipped()
    return ReaderReranker(embedder, model), f"reranker: {READER_RERANKER}"


def kb_retriever(
    settings: Settings,
    kb: SearchableKB,
    config: RetrievalSettings | None = None,
    chat_model: ChatModel | None = None,
) -> KBRetriever:
    """``retrieve.factory.build_retriever`` with the configured reranker (loaded only when
    the configuration reranks)."""
    config = config if config is not None else settings.retrieval
    reranker = configured_reranker(settings, kb.embedder)[0] if config.rerank else None
    return build_retriever(settings, kb, config, chat_model, reranker=reranker)
