"""Contracts of the index stage: embedders, the two index kinds, and the read side of a
knowledge base that retrievers use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragchat.types import Chunk

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, so inner product = cosine similarity."""

    model_name: str
    dim: int

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...


@runtime_checkable
class DenseIndex(Protocol):
    """Vectors addressed by integer row labels the knowledge base assigns. Backends:
    ``dense.FlatIndex`` (exact, the default) and ``dense.HNSWIndex`` (approximate search);
    tests/index/test_dense.py is their contract."""

    def __len__(self) -> int: ...

    def add(self, labels: Rows, vectors: Matrix) -> None: ...

    def remove(self, labels: Rows) -> None: ...

    def search(
        self, query: Vector, k: int, allowed: Rows | None = None
    ) -> tuple[npt.NDArray[np.float32], Rows]:
        """Top-k (scores, labels), best first. ``allowed`` restricts the search to those labels."""
        ...

    def scores(self, query: Vector, labels: Rows) -> npt.NDArray[np.float32]:
        """Exact cosine of the query with the given labels (for gates and dense-first scoring);
        0 for labels the index does not hold."""
        ...

    def vector(self, label: int) -> Vector | None:
        """The stored vector of ``label`` (None when absent): feedback reuses it."""
        ...

    def save(self, directory: Path) -> None: ...


@runtime_checkable
class KeywordIndex(Protocol):
    """BM25 over texts addressed by the same integer labels as the dense index
    (``bm25.BM25Index``; tests/index/test_bm25.py)."""

    def __len__(self) -> int: ...

    def add(self, labels: Rows, texts: Sequence[str]) -> None: ...

    def remove(self, labels: Rows) -> None: ...

    def search(
        self, query: str, k: int, allowed: Rows | None = None
    ) -> tuple[npt.NDArray[np.float32], Rows]: ...

    def scores(self, query: str, labels: Rows) -> npt.NDArray[np.float32]: ...

    def save(self, directory: Path) -> None: ...


@runtime_checkable
class SearchableKB(Protocol):
    """What retrievers need from a knowledge base. Only child chunks are searchable; parents
    are fetched by id for context. Search filters map ``doc_id`` or a metadata key to a value,
    a list of values, or ``ragchat.types.Exclude`` (none of these)."""

    name: str
    embedder: Embedder

    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]: ...

    def bm25_search(
        self, query: str, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]: ...

    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]: ...

    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]: ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks (children or parents) in the order asked; unknown ids are skipped."""
        ...

    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        """The child ``offset`` positions away in the same document, if any."""
        ...

    def child_count(self) -> int: ...


@runtime_checkable
class ListsChildren(Protocol):
    """Optional ``SearchableKB`` capability: every searchable chunk, and a version that changes
    whenever they do (in-memory side indexes such as the title index rebuild on it)."""

    def children(self) -> list[Chunk]: ...

    def version(self) -> tuple[Any, ...]: ...


@runtime_checkable
class KeepsVectors(Protocol):
    """Optional ``SearchableKB`` capability: the indexed vectors of chunks, so feedback passes
    need not re-embed texts the index already holds."""

    def stored_vectors(self, chunk_ids: Sequence[str]) -> Matrix | None:
        """Rows in the order asked; None if any chunk has no stored vector."""
        ...
