"""Dense vector indexes over normalised embeddings.

``FlatIndex`` is exact. Its scan runs in FAISS (``faiss.knn`` over the index's own numpy
matrix: no second copy, and the same files on disk) when faiss-cpu is installed, else in numpy.
Measured side by side with one thread, FAISS's scan took about half numpy's matvec + top-k at
100k vectors (docs/benchmarks.md, issue 15); the on-disk format is unchanged, so knowledge
bases written before open as they were.
``HNSWIndex`` (hnswlib) keeps the same exact vectors for scoring and persistence, and adds an
approximate graph for search on large collections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragchat.embed.base import Matrix, Rows, Vector
from ragchat.errors import IndexStateError
from ragchat.vectorstores.base import DenseIndex
from ragchat.vectorstores.bm25 import top_k

Kernel = Literal["auto", "faiss", "numpy"]
_FAISS: list[Any] = []  # the faiss module once imported (None when not installed)


def _faiss() -> Any:
    if not _FAISS:
        try:
            import faiss

            # One thread: a second one only slowed single queries down on 2 shared cores.
            faiss.omp_set_num_threads(1)
            _FAISS.append(faiss)
        except ImportError:
            _FAISS.append(None)
    return _FAISS[0]


# Extra neighbours fetched from FAISS so that ties at the k-th score still break by label.
_TIE_MARGIN = 8


class FlatIndex:
    kind = "flat"

    def __init__(self, dim: int, kernel: Kernel = "auto") -> None:
        self.dim = dim
        if kernel == "faiss" and _faiss() is None:
            raise IndexStateError("the faiss kernel needs faiss-cpu (`pip install faiss-cpu`)")
        self.kernel: Kernel = (
            kernel if kernel != "auto" else ("faiss" if _faiss() is not None else "numpy")
        )
        self.vectors: Matrix = np.zeros((0, dim), dtype=np.float32)
        self.labels: Rows = np.zeros(0, dtype=np.int64)
        self._row_of: dict[int, int] = {}

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def add(self, labels: Rows, vectors: Matrix) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise IndexStateError(f"expected vectors of dim {self.dim}, got shape {vectors.shape}")
        if len(labels) != vectors.shape[0]:
            raise ValueError("labels and vectors differ in length")
        start = len(self)
        self.vectors = np.concatenate([self.vectors, vectors])
        self.labels = np.concatenate([self.labels, np.asarray(labels, dtype=np.int64)])
        for i, lab in enumerate(labels):
            self._row_of[int(lab)] = start + i

    def remove(self, labels: Rows) -> None:
        drop = np.isin(self.labels, np.asarray(labels, dtype=np.int64))
        if drop.any():
            keep = np.flatnonzero(~drop)
            self.vectors = np.ascontiguousarray(self.vectors[keep])
            self.labels = self.labels[keep]
            self._row_of = {int(lab): i for i, lab in enumerate(self.labels)}

    def search(
        self, query: Vector, k: int, allowed: Rows | None = None
    ) -> tuple[npt.NDArray[np.float32], Rows]:
        if allowed is not None:
            rows = np.asarray(
                [self._row_of[int(a)] for a in allowed if int(a) in self._row_of], dtype=np.int64
            )
            scores = self.vectors[rows] @ query
            return top_k(scores.astype(np.float32), self.labels[rows], k)
        if self.kernel == "faiss" and len(self):
            faiss = _faiss()
            fetch = min(k + _TIE_MARGIN, len(self))
            q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
            dist, found = faiss.knn(q, self.vectors, fetch, metric=faiss.METRIC_INNER_PRODUCT)
            rows = found[0][found[0] >= 0]
            scores = dist[0][: len(rows)].astype(np.float32)
            kth = min(k, len(rows)) - 1
            # Ties at the k-th score may reach past what was fetched (duplicate chunks):
            # then only the full scan can break them by label.
            if not (len(rows) == fetch < len(self) and scores[-1] >= scores[kth]):
                return top_k(scores, self.labels[rows], k)
        return top_k((self.vectors @ query).astype(np.float32), self.labels, k)

    def scores(self, query: Vector, labels: Rows) -> npt.NDArray[np.float32]:
        rows = [self._row_of.get(int(lab), -1) for lab in labels]
        out = np.zeros(len(rows), dtype=np.float32)
        known = [i for i, r in enumerate(rows) if r >= 0]
        if known:
            out[known] = self.vectors[[rows[i] for i in known]] @ query
        return out

    def vector(self, label: int) -> Vector | None:
        row = self._row_of.get(int(label))
        return None if row is None else self.vectors[row]

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "dense_vectors.tmp.npy", self.vectors)
        np.save(directory / "dense_labels.tmp.npy", self.labels)
        (directory / "dense_vectors.tmp.npy").replace(directory / "dense_vectors.npy")
        (directory / "dense_labels.tmp.npy").replace(directory / "dense_labels.npy")

    @classmethod
    def load(cls, directory: Path, dim: int, kernel: Kernel = "auto") -> FlatIndex:
        try:
            vectors = np.load(directory / "dense_vectors.npy", mmap_mode=None)
            labels = np.load(directory / "dense_labels.npy")
        except (OSError, ValueError) as exc:
            raise IndexStateError(
                f"dense index in {directory} is missing or corrupt: {exc}"
            ) from exc
        if vectors.ndim != 2 or (vectors.shape[0] and vectors.shape[1] != dim):
            raise IndexStateError(
                f"dense index in {directory} has vectors of shape {vectors.shape}, "
                f"but the manifest says dim {dim}"
            )
        if vectors.shape[0] != labels.shape[0]:
            raise IndexStateError(
                f"dense index in {directory}: {labels.shape[0]} labels for "
                f"{vectors.shape[0]} vectors"
            )
        index = cls(dim, kernel)
        index.vectors = np.ascontiguousarray(vectors.reshape(-1, dim), dtype=np.float32)
        index.labels = labels.astype(np.int64)
        index._row_of = {int(lab): i for i, lab in enumerate(index.labels)}
        return index


class HNSWIndex(FlatIndex):
    """Approximate search through an hnswlib graph; exact vectors are kept for ``scores``."""

    kind = "hnsw"

    def __init__(self, dim: int, m: int = 32, ef_construction: int = 200, ef: int = 128) -> None:
        super().__init__(dim)
        self.m, self.ef_construction, self.ef = m, ef_construction, ef
        self._graph = self._new_graph(1024)

    def _new_graph(self, capacity: int):  # type: ignore[no-untyped-def]
        try:
            import hnswlib
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise IndexStateError("the hnsw backend needs `pip install ragchat[hnsw]`") from exc
        graph = hnswlib.Index(space="ip", dim=self.dim)
        graph.init_index(
            max_elements=capacity,
            M=self.m,
            ef_construction=self.ef_construction,
            allow_replace_deleted=False,
        )
        graph.set_ef(self.ef)
        graph.set_num_threads(1)
        return graph

    def add(self, labels: Rows, vectors: Matrix) -> None:
        super().add(labels, vectors)
        needed = self._graph.get_current_count() + len(labels)
        if needed > self._graph.get_max_elements():
            self._graph.resize_index(max(needed, 2 * self._graph.get_max_elements()))
        self._graph.add_items(np.asarray(vectors, dtype=np.float32), np.asarray(labels))

    def remove(self, labels: Rows) -> None:
        present = [int(lab) for lab in labels if int(lab) in self._row_of]
        super().remove(labels)
        for lab in present:
            self._graph.mark_deleted(lab)

    def search(
        self, query: Vector, k: int, allowed: Rows | None = None
    ) -> tuple[npt.NDArray[np.float32], Rows]:
        if allowed is not None:
            # Small filtered sets are searched exactly: faster and no recall loss.
            return super().search(query, k, allowed)
        k = min(k, len(self))
        if k == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        self._graph.set_ef(max(self.ef, k))
        found, dist = self._graph.knn_query(query.reshape(1, -1), k=k)
        scores = (1.0 - dist[0]).astype(np.float32)  # hnswlib "ip" distance is 1 - dot
        return top_k(scores, found[0].astype(np.int64), k)

    def save(self, directory: Path) -> None:
        super().save(directory)
        self._graph.save_index(str(directory / "hnsw.tmp.bin"))
        (directory / "hnsw.tmp.bin").replace(directory / "hnsw.bin")

    @classmethod
    def load(cls, directory: Path, dim: int, kernel: Kernel = "auto") -> HNSWIndex:
        flat = FlatIndex.load(directory, dim, kernel)
        index = cls(dim)
        index.vectors, index.labels, index._row_of = flat.vectors, flat.labels, flat._row_of
        path = directory / "hnsw.bin"
        if path.exists():
            index._graph.load_index(str(path), max_elements=max(len(index.labels), 1024))
            index._graph.set_ef(index.ef)
            index._graph.set_num_threads(1)
        elif len(index):
            index._graph = index._new_graph(max(len(index), 1024))
            index._graph.add_items(index.vectors, index.labels)
        return index


def new_dense_index(kind: str, dim: int) -> DenseIndex:
    if kind == "flat":
        return FlatIndex(dim)
    if kind == "hnsw":
        return HNSWIndex(dim)
    raise IndexStateError(f"unknown dense backend {kind!r} (use 'flat' or 'hnsw')")


def load_dense_index(kind: str, directory: Path, dim: int) -> DenseIndex:
    if kind == "hnsw":
        return HNSWIndex.load(directory, dim)
    return FlatIndex.load(directory, dim)
