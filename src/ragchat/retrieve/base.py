"""Contracts of the retrieval stage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ragchat.types import Hit, RetrievalResult


@runtime_checkable
class Retriever(Protocol):
    def retrieve(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> RetrievalResult: ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores (query, passage) pairs; higher is more relevant."""

    model_name: str

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]: ...
