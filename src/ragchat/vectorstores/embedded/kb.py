"""A knowledge base on disk: chunk store + dense index + BM25 index + manifest, side by side in
one generation folder of ``<root>/<name>/`` (``generations.py``: writes are atomic, crashes
recover on open). Children are searchable (both indexes share their integer labels); parents
are stored for context only."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragchat.crashpoints import crashpoint
from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import (
    IndexStateError,
    KnowledgeBaseNotFound,
)
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores.base import DenseIndex, DocumentRow, KeywordIndex, children_and_vectors
from ragchat.vectorstores.bm25 import BM25Index
from ragchat.vectorstores.embedded import generations as gens
from ragchat.vectorstores.embedded.chunkstore import ChunkStore
from ragchat.vectorstores.embedded.dense import load_dense_index, new_dense_index
from ragchat.vectorstores.embedded.generations import Generation
from ragchat.vectorstores.filters import resolved
from ragchat.vectorstores.lock import LOCK_TIMEOUT_S, WriteLock
from ragchat.vectorstores.manifest import Manifest, check_embedder, now_iso
from ragchat.vectorstores.names import validate_name

_Search = Callable[[Any, int, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]

log = logging.getLogger(__name__)


class KnowledgeBase:
    """Reads one committed generation (a snapshot: later writes by others do not show until
    it is opened again); its first change forks a working generation, which ``save`` commits
    and ``close`` discards (``generations.py``)."""

    def __init__(
        self,
        path: Path,
        manifest: Manifest,
        embedder: Embedder,
        store: ChunkStore,
        dense: DenseIndex,
        bm25: KeywordIndex,
        generation: Generation | None = None,
    ) -> None:
        self.path = path
        self.name = manifest.name
        self.manifest = manifest
        self.embedder = embedder
        self.catalogue = store
        self.dense = dense
        self.bm25 = bm25
        self.generation = generation  # the committed state read; None before the first commit
        self._work: Generation | None = None  # the working generation of a write in progress
        self._lock: WriteLock | None = None
        # A lock the caller took before opening (``held_lock``): every write of this instance
        # happens under it, and the caller, not a commit, releases it.
        self._held: WriteLock | None = None
        self._dirty: set[str] = set()  # indexes changed since the last commit
        store.before_write = self._begin_write
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
        lock: WriteLock | None = None,
    ) -> KnowledgeBase:
        """``lock``: the knowledge base's write lock, already held by the caller (``open``)."""
        path = Path(root) / validate_name(name)
        if gens.exists(path):
            raise IndexStateError(f"knowledge base {name!r} already exists")
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
        held = lock
        if lock is None:
            lock = WriteLock(path)
            lock.acquire(LOCK_TIMEOUT_S)
        try:
            if gens.exists(path):
                raise IndexStateError(f"knowledge base {name!r} already exists")
            gens.log_tidy(name, gens.tidy(path))  # a create that died before its commit
            number = max(gens.generations(path), default=0) + 1
            work = Generation(number, path / gens.gen_name(number))
            work.dir.mkdir()
            store = ChunkStore(work.dir / "chunks.sqlite", create=True)
        except BaseException:
            if held is None:
                lock.release()
            raise
        kb = cls(
            path,
            manifest,
            embedder,
            store,
            new_dense_index(dense_backend, embedder.dim),
            BM25Index(),
        )
        kb._work, kb._lock, kb._held, kb._dirty = work, lock, held, {"dense", "bm25"}
        try:
            kb.save()
        except BaseException:
            kb.close()
            raise
        return kb

    @classmethod
    def open(
        cls,
        root: Path,
        name: str,
        embedder: Embedder,
        *,
        strict_model: bool = True,
        lock: WriteLock | None = None,
    ) -> KnowledgeBase:
        """``lock``: the knowledge base's write lock, already held by the caller, who releases
        it: nobody can commit between this open and this instance's writes, so they build on
        the latest commit (another process's included) instead of failing as a stale write."""
        path = Path(root) / validate_name(name)
        if lock is None:
            gens.recover(path)
        else:
            gens.log_tidy(name, gens.tidy(path))
        for attempt in range(3):
            gen = gens.current(path)
            if gen is None:
                raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}")
            try:
                kb = cls._load(path, gen, embedder, strict_model=strict_model)
                kb._held = lock
                return kb
            except IndexStateError:
                # Two commits between reading CURRENT and loading: read the new one.
                if attempt == 2 or gens.current(path) == gen:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _load(
        cls, path: Path, gen: Generation, embedder: Embedder, *, strict_model: bool
    ) -> KnowledgeBase:
        name = path.name
        manifest = Manifest.load(gen.dir)
        check_embedder(manifest, name, embedder, strict=strict_model)
        store = ChunkStore(gen.dir / "chunks.sqlite")
        try:
            dense = load_dense_index(manifest.dense_backend, gen.dir, manifest.dim)
            bm25 = BM25Index.load(gen.dir)
            children = store.count(parents=False)
        except BaseException:
            store.close()
            raise
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
                f"`ragchat kb repair {name}` fixes it"
            )
        return cls(path, manifest, embedder, store, dense, bm25, gen)

    @classmethod
    def open_or_create(
        cls, root: Path, name: str, embedder: Embedder, **kwargs: Any
    ) -> KnowledgeBase:
        if gens.exists(Path(root) / validate_name(name)):
            return cls.open(root, name, embedder, lock=kwargs.get("lock"))
        return cls.create(root, name, embedder, **kwargs)

    def close(self) -> None:
        """Closes the files; a write not committed by ``save`` is discarded."""
        self.catalogue.close()
        if self._work is not None:
            shutil.rmtree(self._work.dir, ignore_errors=True)
            log.info("knowledge base %s: uncommitted changes discarded", self.name)
            self._work = None
        self._release()

    def stale(self) -> bool:
        """True when another instance or process committed since this one was opened: a
        reader that wants the new state opens the knowledge base again (one small read)."""
        try:
            return gens.current(self.path) != self.generation
        except IndexStateError:
            return True

    def _release(self) -> None:
        if self._lock is not None and self._lock is not self._held:
            self._lock.release()
        self._lock = None

    @staticmethod
    def delete(root: Path, name: str) -> None:
        path = Path(root) / validate_name(name)
        if not gens.exists(path):
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}")
        shutil.rmtree(path)

    @staticmethod
    def names(root: Path) -> list[str]:
        if not Path(root).is_dir():
            return []
        return sorted(p.name for p in Path(root).iterdir() if gens.exists(p))

    @staticmethod
    def describe(root: Path, name: str) -> dict[str, Any]:
        """Manifest figures and size on disk, without loading a model or the indexes."""
        path = Path(root) / validate_name(name)
        gen = gens.current(path)
        if gen is None:
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}")
        info: dict[str, Any] = Manifest.load(gen.dir).model_dump()
        info["bytes_on_disk"] = sum(f.stat().st_size for f in gen.dir.iterdir() if f.is_file())
        info["path"] = str(path)
        info["generation"] = gen.number
        return info

    def _begin_write(self) -> None:
        """Forks the working generation at the first change (under the write lock)."""
        if self._work is not None:
            return
        if self._held is not None and not self._held.held:
            self._held = None  # its holder released it: an ordinary instance from now on
        lock = self._held or WriteLock(self.path)
        if not lock.held:
            lock.acquire(LOCK_TIMEOUT_S)
        try:
            cur = gens.current(self.path)
            if cur is None or cur != self.generation:
                raise IndexStateError(
                    f"knowledge base {self.name!r} was changed by another writer since it was "
                    "opened; open it again and retry"
                )
            gens.log_tidy(self.name, gens.tidy(self.path))
            number = max([cur.number, *gens.generations(self.path)]) + 1
            work = Generation(number, self.path / gens.gen_name(number))
            work.dir.mkdir()
            self.catalogue.fork(work.dir / "chunks.sqlite")
        except BaseException:
            if lock is not self._held:
                lock.release()
            raise
        self._work, self._lock = work, lock

    def save(self) -> None:
        """Commits every change since the last commit as one new generation: chunk store,
        indexes (an unchanged one is hard-linked from the previous generation) and manifest
        are written and synced into the working folder, then ``CURRENT`` flips to it. A crash
        before the flip leaves the previous state; after it, the new one."""
        self._begin_write()
        work = self._work
        assert work is not None
        crashpoint("save.begin")
        self.catalogue.seal()
        crashpoint("save.chunks")
        self._write_index("dense", self.dense.save, gens.DENSE_FILES, work.dir)
        crashpoint("save.dense")
        self._write_index("bm25", self.bm25.save, gens.BM25_FILES, work.dir)
        crashpoint("save.bm25")
        self.manifest.children = self.catalogue.count(parents=False)
        self.manifest.parents = self.catalogue.count(parents=True)
        self.manifest.documents = self.catalogue.document_count()
        self.manifest.files = len(self.catalogue.files())
        self.manifest.updated = now_iso()
        self.manifest.save(work.dir)
        crashpoint("save.manifest")
        gens.fsync_tree(work.dir)
        crashpoint("save.fsync")
        gens.flip(self.path, work)
        self.generation, self._work = work, None
        self._dirty.clear()
        crashpoint("save.flipped")
        try:
            for line in gens.tidy(self.path):
                log.debug("knowledge base %s: %s", self.name, line)
        finally:
            self._release()

    def _write_index(
        self, kind: str, save: Callable[[Path], None], files: tuple[str, ...], directory: Path
    ) -> None:
        prev = self.generation
        if kind in self._dirty or prev is None or not gens.link_files(prev.dir, directory, files):
            save(directory)

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
        children, vectors = children_and_vectors(chunks, vectors, self.embedder, progress=progress)
        labels = np.arange(self._next_label, self._next_label + len(children), dtype=np.int64)
        label_of = {c.chunk_id: int(lab) for c, lab in zip(children, labels, strict=True)}
        self.catalogue.begin()
        try:
            self.catalogue.insert_chunks(chunks, label_of)
            self.dense.add(labels, vectors)
            self.bm25.add(labels, [c.text for c in children])
            self.catalogue.commit()
        except Exception:
            self.catalogue.rollback()
            self.dense.remove(labels)
            self.bm25.remove(labels)
            raise
        self._next_label += len(children)
        if children:
            self._dirty.update(("dense", "bm25"))
        for cid, lab in label_of.items():
            self._chunk_of[lab] = cid
            self._label_of[cid] = lab
        if save:
            self.save()
        return len(children)

    def add_document_row(self, row: DocumentRow) -> None:
        self.catalogue.insert_document(row)

    def delete_document(self, doc_id: str, *, save: bool = True) -> int:
        self.catalogue.begin()
        labels = self.catalogue.delete_document(doc_id)
        self.catalogue.commit()
        arr = np.asarray(labels, dtype=np.int64)
        self.dense.remove(arr)
        self.bm25.remove(arr)
        if labels:
            self._dirty.update(("dense", "bm25"))
        for lab in labels:
            cid = self._chunk_of.pop(lab, None)
            if cid is not None:
                self._label_of.pop(cid, None)
        if save:
            self.save()
        return len(labels)

    def reindexed(self) -> None:
        """After the chunk store and the indexes were changed directly (``kb repair``): label
        maps are read again and both indexes are written by the next ``save``."""
        self._chunk_of = self.catalogue.label_map()
        self._label_of = {cid: lab for lab, cid in self._chunk_of.items()}
        self._next_label = self.catalogue.max_label() + 1
        self._dirty.update(("dense", "bm25"))

    # -- reading (SearchableKB) ---------------------------------------------------------------
    def _restrict(self, filters: Mapping[str, Any] | None) -> tuple[np.ndarray | None, np.ndarray]:
        """(allowed labels or None for all, banned labels) for the filters."""
        none = np.zeros(0, dtype=np.int64)
        if not filters:
            return None, none
        filters = resolved(filters, self)
        include = {k: v for k, v in filters.items() if not isinstance(v, Exclude)}
        banned_ids: set[int] = set()
        for key, value in filters.items():
            if isinstance(value, Exclude) and value.values:
                banned_ids.update(self.catalogue.labels_matching({key: list(value.values)}))
        banned = np.asarray(sorted(banned_ids), dtype=np.int64)
        if not include:
            return None, banned
        allowed = np.asarray(self.catalogue.labels_matching(include), dtype=np.int64)
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
        return self.catalogue.get(chunk_ids)

    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        return self.catalogue.at_position(chunk.doc_id, chunk.position + offset)

    def child_count(self) -> int:
        return len(self.dense)

    # -- optional capabilities (ListsChildren, KeepsVectors) -------------------------------------
    def children(self) -> list[Chunk]:
        return list(self.catalogue.iter_children())

    def parents(self) -> list[Chunk]:
        return list(self.catalogue.iter_parents())

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
