"""``ragchat kb check`` / ``kb repair`` and the ``/health`` probe for embedded knowledge bases.

Since writes are atomic (``generations.py``) a crash alone cannot break a knowledge base; what
remains is damage from outside (files deleted or truncated by hand, a full disk, a copy of a
half-written folder) and knowledge bases broken by a crash of the layout before generations
(e.g. "manifest 300, chunk store 600, dense 600, bm25 300"). ``repair`` then either rebuilds
the derivable parts from the chunk store and the stored vectors (BM25 from the chunk texts,
the manifest's counts from the rows; chunks without a document row and documents without
stored vectors are dropped: they are the unfinished write, and their files are forgotten so
that a re-ingest adds them again), or, when the chunk store itself is unusable, rolls back to
the previous committed generation.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ragchat.errors import IndexStateError, KnowledgeBaseNotFound
from ragchat.vectorstores.base import CheckReport
from ragchat.vectorstores.bm25 import BM25Index
from ragchat.vectorstores.embedded import generations as gens
from ragchat.vectorstores.embedded.chunkstore import ChunkStore
from ragchat.vectorstores.embedded.dense import FlatIndex, new_dense_index
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.lock import WriteLock
from ragchat.vectorstores.manifest import Manifest
from ragchat.vectorstores.names import validate_name

log = logging.getLogger(__name__)


def _labels(directory: Path, name: str) -> np.ndarray:
    """The labels file of an index, read without loading the vectors or term counts."""
    try:
        return np.asarray(np.load(directory / name, mmap_mode="r"), dtype=np.int64)
    except ValueError:  # an empty array cannot be mapped on some platforms
        return np.asarray(np.load(directory / name), dtype=np.int64)


def problems_of(directory: Path, *, deep: bool, legacy: bool = False) -> list[str]:
    """What makes the generation in ``directory`` unusable; [] when it opens. Messages name
    files and counts, never a path (``/health`` shows them). ``deep`` also runs SQLite's
    check, loads the vectors and compares label sets (the CLI); without it only headers and
    counts are read (the health probe: milliseconds)."""
    try:
        manifest = Manifest.load(directory)
    except IndexStateError:
        return ["manifest.json is missing or corrupt"]
    out: list[str] = []
    try:
        store = ChunkStore(directory / "chunks.sqlite")
    except IndexStateError:
        return ["chunks.sqlite (the chunk store) is missing"]
    try:
        if deep and (verdict := store.quick_check()) != "ok":
            return [f"chunks.sqlite is corrupt: {verdict[:200]}"]
        children = store.count(parents=False)
        store_labels = set(store.label_map()) if deep else set()
        orphans = store.orphan_documents() if legacy else []
    except Exception as exc:  # sqlite3.DatabaseError and friends
        return [f"chunks.sqlite cannot be read ({type(exc).__name__})"]
    finally:
        store.close()
    counts = {"manifest": manifest.children, "chunk store": children}
    try:
        dense = _labels(directory, "dense_labels.npy")
        counts["dense index"] = len(dense)
        if deep:
            FlatIndex.load(directory, manifest.dim)
    except (OSError, ValueError, IndexStateError):
        out.append("the dense index (dense_*.npy) is missing or corrupt")
        dense = None
    try:
        bm25 = _labels(directory, "bm25_labels.npy")
        counts["bm25 index"] = len(bm25)
        if deep:
            BM25Index.load(directory)
    except (OSError, ValueError, IndexStateError):
        out.append("the BM25 index (bm25_*) is missing or corrupt")
        bm25 = None
    if len(set(counts.values())) != 1:
        shown = ", ".join(f"{k} {v}" for k, v in counts.items())
        out.append(f"inconsistent child chunk counts: {shown}")
    elif deep:
        for kind, labels in (("dense index", dense), ("bm25 index", bm25)):
            if labels is not None and set(labels.tolist()) != store_labels:
                out.append(f"the {kind} holds other chunks than the chunk store")
    if orphans and legacy:  # the old save committed chunks before their documents
        out.append(f"{len(orphans)} document(s) have chunks but no document row")
    return out


def check(root: Path, name: str, *, deep: bool = True) -> CheckReport:
    """Reads only; changes nothing."""
    path = Path(root) / validate_name(name)
    report = CheckReport(name)
    try:
        gen = gens.current(path)
    except IndexStateError as exc:
        report.problems.append(str(exc))
        return report
    if gen is None:
        if not gens.generations(path):
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}")
        report.problems.append("no committed generation (CURRENT is missing)")
        return report
    report.generation = gen.number
    if gen.legacy:
        report.notes.append("layout before generations: moves into one on its next write")
    elif not gen.dir.is_dir():
        report.problems.append(f"CURRENT names {gen.dir.name}, which is missing")
        return report
    newer = [n for n in gens.generations(path) if n > gen.number]
    if newer:
        report.notes.append(
            f"{len(newer)} uncommitted generation(s) of an interrupted write: removed on the "
            "next open"
        )
    report.problems.extend(problems_of(gen.dir, deep=deep, legacy=gen.legacy))
    return report


class _NoEmbedder:
    """Repair copies stored vectors; it never embeds."""

    def __init__(self, model_name: str, dim: int) -> None:
        self.model_name, self.dim = model_name, dim

    def embed_documents(self, texts: object, *, progress: bool = False) -> np.ndarray:
        raise IndexStateError("repair uses stored vectors only")

    def embed_query(self, text: str) -> np.ndarray:
        raise IndexStateError("repair uses stored vectors only")


def repair(root: Path, name: str) -> list[str]:
    """Makes the knowledge base open again; returns what was done (see the module docstring).
    Raises ``IndexStateError`` when nothing usable is left (delete it and ingest again)."""
    path = Path(root) / validate_name(name)
    done = gens.recover(path)
    report = check(root, name)
    if report.ok:
        return [*done, "nothing to repair: it opens"]
    gen = _current_or_none(path)
    if gen is not None and (gen.legacy or gen.dir.is_dir()):
        try:
            return done + _rebuild(path, gen)
        except IndexStateError as exc:
            log.warning("knowledge base %s: rebuild failed (%s); rolling back", name, exc)
    return done + _roll_back(path, gen)


def _current_or_none(path: Path) -> gens.Generation | None:
    try:
        return gens.current(path)
    except IndexStateError:
        return None


def _rebuild(path: Path, gen: gens.Generation) -> list[str]:
    manifest = Manifest.load(gen.dir)  # model, dim, backend and chunking: not derivable
    try:
        store = ChunkStore(gen.dir / "chunks.sqlite")
        if store.quick_check() != "ok":
            store.close()
            raise IndexStateError("the chunk store is corrupt")
    except IndexStateError:
        raise
    except Exception as exc:
        raise IndexStateError(f"the chunk store cannot be read ({type(exc).__name__})") from exc
    try:
        stored = FlatIndex.load(gen.dir, manifest.dim)
    except IndexStateError:
        stored = FlatIndex(manifest.dim)
    embedder = _NoEmbedder(manifest.embedding_model, manifest.dim)
    kb = KnowledgeBase(
        path,
        manifest,
        embedder,
        store,
        new_dense_index(manifest.dense_backend, manifest.dim),
        BM25Index(),
        gen,
    )
    done: list[str] = []
    try:
        # Chunks without a document are an unfinished write only in the old layout (its save
        # committed chunks first); a generation holds them only if a caller added them so.
        orphans = store.orphan_documents() if gen.legacy else []
        for doc_id in orphans:
            kb.catalogue.delete_document(doc_id)  # forks the working generation
        if orphans:
            done.append(f"dropped the chunks of {len(orphans)} unfinished document(s)")
        have = {int(lab) for lab in stored.labels}
        without = {cid for lab, cid in store.label_map().items() if lab not in have}
        missing_docs = sorted({c.doc_id for c in store.get(sorted(without))})
        files = {r.file_path for r in store.documents() if r.doc_id in missing_docs}
        for doc_id in missing_docs:
            kb.catalogue.delete_document(doc_id)
        for p in sorted(f for f in files if f):
            if not kb.catalogue.docs_of_file(p):
                kb.catalogue.forget_file(p)
        if missing_docs:
            done.append(
                f"dropped {len(missing_docs)} document(s) without stored vectors "
                "(ingest their files again)"
            )
        cid_of = store.label_map()
        labels = np.asarray(sorted(cid_of), dtype=np.int64)
        if len(labels):
            rows = [stored.vector(int(lab)) for lab in labels]  # all present: see above
            kb.dense.add(labels, np.stack([r for r in rows if r is not None]))
            kb.bm25.add(labels, [c.text for c in store.get([cid_of[int(x)] for x in labels])])
        kb.reindexed()
        kb.save()
        number = kb.generation.number if kb.generation else 0
        done.append(
            "rebuilt the dense and BM25 indexes and the manifest from the chunk store "
            f"({len(labels)} chunks) as generation {gens.gen_name(number)}"
        )
    finally:
        kb.close()
    return done


def _roll_back(path: Path, gen: gens.Generation | None) -> list[str]:
    newest = gen.number if gen is not None else max(gens.generations(path), default=0) + 1
    for number in sorted(gens.generations(path), reverse=True):
        if number >= newest:
            continue
        candidate = gens.Generation(number, path / gens.gen_name(number))
        if problems_of(candidate.dir, deep=True):
            continue
        lock = WriteLock(path)
        lock.acquire(10.0)
        try:
            gens.flip(path, candidate)
            gens.tidy(path, keep_previous=False)
        finally:
            lock.release()
        return [f"rolled back to the last consistent generation {gens.gen_name(number)}"]
    raise IndexStateError(
        f"knowledge base {path.name!r} cannot be repaired: no consistent state is left; "
        f"delete it (`ragchat kb delete {path.name}`) and ingest again"
    )
