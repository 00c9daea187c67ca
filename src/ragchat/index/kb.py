"""A knowledge base on disk: chunk store + dense index + BM25 index + manifest, side by side in
``<root>/<name>/``. Children are searchable (both indexes share their integer labels); parents are
stored for context only."""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragchat.errors import (
    IndexStateError,
    InvalidKnowledgeBaseName,
    KnowledgeBaseNotFound,
    ModelMismatchError,
)
from ragchat.index.base import DenseIndex, Embedder, KeywordIndex, Matrix, Vector
from ragchat.index.bm25 import BM25Index
from ragchat.index.chunkstore import ChunkStore, DocumentRow
from ragchat.index.dense import load_dense_index, new_dense_index
from ragchat.index.manifest import Manifest, now_iso
from ragchat.types import Chunk, Exclude

_Search = Callable[[Any, int, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]

log = logging.getLogger(__name__)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def validate_name(name: str) -> str:
    """``name`` if it can name a knowledge base (it is a folder name), else
    ``InvalidKnowledgeBaseName``."""
    if not _NAME.match(name):
        raise InvalidKnowledgeBaseName(
            f"invalid knowledge base name {name!r}: knowledge base names are 1-64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


class KnowledgeBase:
    def __init__(
        self,
        path: Path,
        manifest: Manifest,
        embedder: Embedder,
        store: ChunkStore,
        dense: DenseIndex,
        bm25: KeywordIndex,
    ) -> None:
        self.path = path
        self.name = manifest.name
        self.manifest = manifest
        self.embedder = embedder
        self.store = store
        self.dense = dense
        self.bm25 = bm25
        self._chunk_of = store.label_map()
        self._label_of = {cid: lab for lab, cid in self._chunk_of.items()}
        self._next_label = store.max_label() + 1

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        root: Path,
        name: str,
        embedder: Embedder,
        *,
        dense_backend: str = "flat",
        chunking: Mapping[str, Any] | None = None,
    ) -> KnowledgeBase:
        path = Path(root) / validate_name(name)
        if (path / "manifest.json").exists():
            raise IndexStateError(f"knowledge base {name!r} already exists at {path}")
        path.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(
            name=name,
            embedding_model=embedder.model_name,
            dim=embedder.dim,
            dense_backend=dense_backend,
            chunking=dict(chunking or {}),
            created=now_iso(),
            updated=now_iso(),
        )
        kb = cls(
            path,
            manifest,
            embedder,
            ChunkStore(path / "chunks.sqlite"),
            new_dense_index(dense_backend, embedder.dim),
            BM25Index(),
        )
        kb.save()
        return kb

    @classmethod
    def open(
        cls, root: Path, name: str, embedder: Embedder, *, strict_model: bool = True
    ) -> KnowledgeBase:
        path = Path(root) / validate_name(name)
        if not (path / "manifest.json").exists():
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r} in {root}")
        manifest = Manifest.load(path)
        if manifest.embedding_model != embedder.model_name or manifest.dim != embedder.dim:
            msg = (
                f"knowledge base {name!r} was built with {manifest.embedding_model!r} "
                f"(dim {manifest.dim}) but the configured embedder is "
                f"{embedder.model_name!r} (dim {embedder.dim}); re-ingest it or configure "
                "the original model"
            )
            if strict_model or manifest.dim != embedder.dim:
                raise ModelMismatchError(msg)
            log.warning(msg)
        store = ChunkStore(path / "chunks.sqlite")
        dense = load_dense_index(manifest.dense_backend, path, manifest.dim)
        bm25 = BM25Index.load(path)
        children = store.count(parents=False)
        counts = {
            "manifest": manifest.children,
            "chunk store": children,
            "dense index": len(dense),
            "bm25 index": len(bm25),
        }
        if len(set(counts.values())) != 1:
            store.close()
            raise IndexStateError(
                f"knowledge base {name!r} is inconsistent (child chunk counts {counts}); "
                f"delete it with `ragchat kb delete {name}` and ingest again"
            )
        return cls(path, manifest, embedder, store, dense, bm25)

    @classmethod
    def open_or_create(
        cls, root: Path, name: str, embedder: Embedder, **kwargs: Any
    ) -> KnowledgeBase:
        if (Path(root) / validate_name(name) / "manifest.json").exists():
            return cls.open(root, name, embedder)
        return cls.create(root, name, embedder, **kwargs)

    def close(self) -> None:
        self.store.close()

    @staticmethod
    def delete(root: Path, name: str) -> None:
        path = Path(root) / validate_name(name)
        if not (path / "manifest.json").exists():
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r} in {root}")
        shutil.rmtree(path)

    @staticmethod
    def names(root: Path) -> list[str]:
        if not Path(root).is_dir():
            return []
        return sorted(p.name for p in Path(root).iterdir() if (p / "manifest.json").exists())

    @staticmethod
    def describe(root: Path, name: str) -> dict[str, Any]:
        """Manifest figures and size on disk, without loading a model or the indexes."""
        path = Path(root) / validate_name(name)
        if not (path / "manifest.json").exists():
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r} in {root}")
        info: dict[str, Any] = Manifest.load(path).model_dump()
        info["bytes_on_disk"] = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        info["path"] = str(path)
        return info

    def save(self) -> None:
        """Indexes first, manifest last: a crash in between is caught by the count check."""
        self.dense.save(self.path)
        self.bm25.save(self.path)
        self.manifest.children = self.store.count(parents=False)
        self.manifest.parents = self.store.count(parents=True)
        self.manifest.documents = self.store.document_count()
        self.manifest.files = len(self.store.files())
        self.manifest.updated = now_iso()
        self.manifest.save(self.path)

    # -- writing -----------------------------------------------------------------------------
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: np.ndarray | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> int:
        """Appends chunks; only new children are embedded and indexed (nothing is rebuilt)."""
        children = [c for c in chunks if not c.is_parent]
        if vectors is None:
            vectors = self.embedder.embed_documents([c.text for c in children], progress=progress)
        labels = np.arange(self._next_label, self._next_label + len(children), dtype=np.int64)
        label_of = {c.chunk_id: int(lab) for c, lab in zip(children, labels, strict=True)}
        self.store.begin()
        try:
            self.store.insert_chunks(chunks, label_of)
            self.dense.add(labels, vectors)
            self.bm25.add(labels, [c.text for c in children])
            self.store.commit()
        except Exception:
            self.store.rollback()
            self.dense.remove(labels)
            self.bm25.remove(labels)
            raise
        self._next_label += len(children)
        for cid, lab in label_of.items():
            self._chunk_of[lab] = cid
            self._label_of[cid] = lab
        if save:
            self.save()
        return len(children)

    def add_document_row(self, row: DocumentRow) -> None:
        self.store.insert_document(row)

    def delete_document(self, doc_id: str, *, save: bool = True) -> int:
        self.store.begin()
        labels = self.store.delete_document(doc_id)
        self.store.commit()
        arr = np.asarray(labels, dtype=np.int64)
        self.dense.remove(arr)
        self.bm25.remove(arr)
        for lab in labels:
            cid = self._chunk_of.pop(lab, None)
            if cid is not None:
                self._label_of.pop(cid, None)
        if save:
            self.save()
        return len(labels)

    # -- reading (SearchableKB) ---------------------------------------------------------------
    def _restrict(self, filters: Mapping[str, Any] | None) -> tuple[np.ndarray | None, np.ndarray]:
        """(allowed labels or None for all, banned labels) for the filters."""
        none = np.zeros(0, dtype=np.int64)
        if not filters:
            return None, none
        include = {k: v for k, v in filters.items() if not isinstance(v, Exclude)}
        banned_ids: set[int] = set()
        for key, value in filters.items():
            if isinstance(value, Exclude) and value.values:
                banned_ids.update(self.store.labels_matching({key: list(value.values)}))
        banned = np.asarray(sorted(banned_ids), dtype=np.int64)
        if not include:
            return None, banned
        allowed = np.asarray(self.store.labels_matching(include), dtype=np.int64)
        return allowed[~np.isin(allowed, banned)], none

    def _search(
        self, search: _Search, query: Any, k: int, filters: Mapping[str, Any] | None
    ) -> list[tuple[str, float]]:
        allowed, banned = self._restrict(filters)
        if not len(banned):
            return self._named(*search(query, k, allowed))
        # An exclusion is usually a few documents of a large collection: fetch that many more
        # and drop them, rather than list every other row (which would also turn an HNSW
        # search into an exact one).
        scores, labels = search(query, k + len(banned), None)
        keep = ~np.isin(labels, banned)
        return self._named(scores[keep][:k], labels[keep][:k])

    def _named(self, scores: np.ndarray, labels: np.ndarray) -> list[tuple[str, float]]:
        return [(self._chunk_of[int(lab)], float(s)) for s, lab in zip(scores, labels, strict=True)]

    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        return self._search(self.dense.search, query_vec, k, filters)

    def bm25_search(
        self, query: str, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        return self._search(self.bm25.search, query, k, filters)

    def _labels(self, chunk_ids: Sequence[str]) -> np.ndarray:
        return np.asarray([self._label_of.get(c, -1) for c in chunk_ids], dtype=np.int64)

    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]:
        return [float(s) for s in self.dense.scores(query_vec, self._labels(chunk_ids))]

    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        return [float(s) for s in self.bm25.scores(query, self._labels(chunk_ids))]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return self.store.get(chunk_ids)

    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        return self.store.at_position(chunk.doc_id, chunk.position + offset)

    def child_count(self) -> int:
        return len(self.dense)

    # -- optional capabilities (ListsChildren, KeepsVectors) -------------------------------------
    def children(self) -> list[Chunk]:
        return list(self.store.iter_children())

    def version(self) -> tuple[Any, ...]:
        return (id(self), self.child_count(), self.manifest.updated)

    def stored_vectors(self, chunk_ids: Sequence[str]) -> Matrix | None:
        rows: list[Vector] = []
        for chunk_id in chunk_ids:
            label = self._label_of.get(chunk_id)
            row = self.dense.vector(label) if label is not None else None
            if row is None:
                return None
            rows.append(np.asarray(row, dtype=np.float32))
        return np.stack(rows) if rows else None
