"""Contracts of the index stage: embedders, the two index kinds, and the read side of a
knowledge base that retrievers use."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragchat.embed.base import Embedder, Matrix, Rows, Vector
from ragchat.types import Chunk
from ragchat.vectorstores.lock import WriteLock

Backend = Literal["embedded", "qdrant", "pgvector"]
BACKENDS: tuple[Backend, ...] = ("embedded", "qdrant", "pgvector")

if TYPE_CHECKING:
    from ragchat.vectorstores.manifest import Manifest


@runtime_checkable
class DenseIndex(Protocol):
    """Vectors addressed by integer row labels the knowledge base assigns. Backends:
    ``dense.FlatIndex`` (exact, the default) and ``dense.HNSWIndex`` (approximate search);
    tests/vectorstores/embedded/test_dense.py is their contract."""

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
    (``bm25.BM25Index``; tests/vectorstores/test_bm25.py)."""

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
    a list of values, ``ragchat.types.Exclude`` (none of these) or ``ExcludeResolved`` (none of
    these, read from the state being searched)."""

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


@runtime_checkable
class SearchesHybrid(Protocol):
    """Optional ``SearchableKB`` capability of a remote store: both first-stage lists in one
    round trip, and (``rrf_k`` given) the RRF ranking fused by the store itself."""

    def hybrid_search(
        self,
        query: str,
        query_vec: Vector,
        k: int,
        filters: Mapping[str, Any] | None = None,
        *,
        rrf_k: int | None = None,
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]], list[tuple[str, float]] | None]:
        """(dense, bm25, fused): fused is the store's RRF ranking when ``rrf_k`` is given."""
        ...


class Catalogue(Protocol):
    """What a knowledge base records beside its chunks: documents and ingested files (the
    dedupe-by-hash and replace-changed-file logic of ingestion reads it)."""

    def file_sha(self, path: str) -> str | None: ...

    def files(self) -> list[tuple[str, str]]: ...

    def paths_with_sha(self, sha256: str) -> list[str]: ...

    def docs_of_file(self, path: str) -> list[str]: ...

    def has_document(self, doc_id: str) -> bool: ...

    def known_documents(self, doc_ids: Iterable[str]) -> set[str]: ...

    def documents(self) -> list[DocumentRow]: ...

    def record_file(self, path: str, sha256: str, when: str) -> None: ...

    def forget_file(self, path: str) -> None: ...

    def set_document_file(self, doc_id: str, path: str) -> None: ...


@runtime_checkable
class WritableKB(SearchableKB, ListsChildren, KeepsVectors, Protocol):
    """A whole knowledge base, whatever stores it: ``kb.KnowledgeBase`` (embedded files) or
    ``qdrant.QdrantKB``. Ingestion, the document endpoints and ``kb migrate`` use this."""

    @property
    def catalogue(self) -> Catalogue: ...

    @property
    def manifest(self) -> Manifest: ...

    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: Matrix | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> int: ...

    def add_document_row(self, row: DocumentRow) -> None: ...

    def delete_document(self, doc_id: str, *, save: bool = True) -> int: ...

    def parents(self) -> list[Chunk]: ...

    def save(self) -> None: ...

    def close(self) -> None: ...

    def stale(self) -> bool:
        """True when another instance or process committed since this one was opened, so a
        reader should open it again; a store read live (Qdrant, pgvector) never is."""
        ...


@dataclass(frozen=True)
class DocumentRow:
    doc_id: str
    source: str
    kind: str
    title: str
    file_path: str | None
    n_children: int
    n_sections: int
    metadata: dict[str, Any]
    added_at: str

    def values(self, encode: Callable[[dict[str, Any]], Any]) -> tuple[Any, ...]:
        """The row in the column order both SQL catalogues store; ``encode`` writes the
        metadata as the backend keeps JSON (text for SQLite, ``Jsonb`` for PostgreSQL)."""
        return (
            self.doc_id, self.source, self.kind, self.title, self.file_path, self.n_children,
            self.n_sections, encode(self.metadata), self.added_at,
        )  # fmt: skip


def children_and_vectors(
    chunks: Sequence[Chunk], vectors: Matrix | None, embedder: Embedder, *, progress: bool
) -> tuple[list[Chunk], Matrix]:
    """What every backend's ``add_chunks`` indexes: the children (parents are stored for
    context, never searched) and their vectors, as given (embedded ahead by ingestion) or
    embedded here."""
    children = [c for c in chunks if not c.is_parent]
    if vectors is None:
        vectors = embedder.embed_documents([c.text for c in children], progress=progress)
    return children, vectors


@dataclass
class CheckReport:
    name: str
    generation: int | None = None  # 0: the layout before generations
    problems: list[str] = field(default_factory=list)  # why it cannot be opened as is
    notes: list[str] = field(default_factory=list)  # harmless, fixed on the next open or write

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class KBInfo:
    """What ``describe`` knows without loading a model or an index."""

    manifest: Manifest
    location: str  # a folder, a Qdrant collection, or a PostgreSQL schema
    bytes_on_disk: int | None = None
    generation: int | None = None  # embedded only

    def as_dict(self) -> dict[str, Any]:
        """Flat figures for tables and JSON (``kb stats``)."""
        out: dict[str, Any] = self.manifest.model_dump()
        out["location"] = self.location
        if self.bytes_on_disk is not None:
            out["bytes_on_disk"] = self.bytes_on_disk
        if self.generation is not None:
            out["generation"] = self.generation
        return out


class VectorStore(Protocol):
    backend: Backend
    # True when every instance reads the store's current state (a server shared by processes
    # and machines): nothing to reopen, no snapshot, and visibility filters fail closed.
    shared: bool

    def open(
        self,
        name: str,
        embedder: Embedder,
        *,
        strict_model: bool = True,
        lock: WriteLock | None = None,
    ) -> WritableKB: ...

    def create(
        self,
        name: str,
        embedder: Embedder,
        *,
        dense_backend: str = "flat",
        chunking: Mapping[str, Any] | None = None,
        lock: WriteLock | None = None,
    ) -> WritableKB: ...

    def names(self) -> list[str]: ...

    def where(self) -> str:
        """Where its knowledge bases live, for people (a folder, a server, a schema)."""
        ...

    def describe(self, name: str) -> KBInfo: ...

    def delete(self, name: str) -> None: ...

    def write_lock(self, name: str) -> WriteLock:
        """The lock (not taken yet) every writer of ``name`` on this machine takes."""
        ...

    def check(self, name: str, *, deep: bool = True) -> CheckReport:
        """What prevents the knowledge base from opening, without changing anything. ``deep``
        False reads only headers and counts (the health probe)."""
        ...

    def repair(self, name: str) -> list[str]:
        """Makes the knowledge base consistent again; returns what was done, one line each."""
        ...

    def single_process(self) -> str | None:
        """Why only one process may open this store, with what to do instead (None: any
        number of processes can)."""
        ...


@runtime_checkable
class LoadsInOneWrite(Protocol):
    """A store that can fill a new knowledge base in one write committed by its ``save``,
    building its indexes once at the end (``kb migrate``'s bulk load): a kill before that
    leaves nothing, so the copy needs no resuming."""

    def create_staged(
        self, name: str, embedder: Embedder, *, chunking: Mapping[str, Any] | None = None
    ) -> WritableKB: ...
