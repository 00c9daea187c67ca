"""``kb migrate``: copies a knowledge base between vector stores without re-embedding — the
stored vectors, chunks, parents, documents, ingested files and the manifest's settings.

Into pgvector (a store that ``LoadsInOneWrite``) the whole copy is one transaction: rows are
loaded into tables without a vector index, the HNSW index is built once at the end, and the
commit makes the knowledge base appear complete; a kill at any instant before leaves nothing
(a re-run starts over). Elsewhere it is resumable: the target carries
``manifest.migrating_from`` until the copy completes. Documents are copied in batches, each
ending with a save; a document is skipped on a re-run when the target already holds its row
(written after its chunks). Qdrant upserts are idempotent, so a half-copied batch is simply
written again; an embedded target killed mid-batch no longer opens consistently and is rebuilt
from scratch (it is local and copying needs no model). Either way a re-run ends with exactly
the counts of one clean run. The ``crashpoint`` calls are where the crash tests kill the process
(``tests/vectorstores/test_migrate_crash.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ragchat.crashpoints import crashpoint
from ragchat.embed.stored import StoredVectorsOnly
from ragchat.errors import IndexStateError
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.base import Backend, DocumentRow, LoadsInOneWrite, WritableKB
from ragchat.vectorstores.factory import create_kb, delete_kb, describe_kb, open_kb, vector_store
from ragchat.vectorstores.sparse import document_lengths

Progress = Callable[[str, int, int], None]
_BATCH_CHILDREN = 512


@runtime_checkable
class PinsAvgdl(Protocol):
    """A store that weighs BM25 itself (Qdrant) takes the source's average length."""

    def pin_avgdl(self, avgdl: float | None) -> None: ...


def _quiet(stage: str, done: int, total: int) -> None:
    return None


@dataclass
class MigrationReport:
    source: str
    target: str
    documents: int = 0
    children: int = 0
    parents: int = 0
    files: int = 0
    skipped_documents: int = 0  # already copied by an interrupted run
    resumed: bool = False


def source_backend(settings: Settings, to: Backend, source: Backend | None = None) -> Backend:
    """The store a migration reads: ``source`` if given, else the configured one; when that
    is the target, the embedded files (or, to the embedded files, Qdrant: pgvector's copies
    back name ``--from pgvector``)."""
    chosen = source or settings.vector_store.backend
    if chosen == to:
        if source is not None:
            raise IndexStateError(f"a migration needs two stores: both are {to!r}")
        chosen = "qdrant" if to == "embedded" else "embedded"
    return chosen


def _target(
    settings: Settings, name: str, to: Backend, source: WritableKB, mark: str
) -> tuple[WritableKB, bool, bool]:
    """The target knowledge base, whether it resumes an interrupted copy, and whether it is
    written in one go (``LoadsInOneWrite``: batches are not saved, ``save`` commits it all)."""
    embedder = source.embedder
    store = vector_store(settings, to)
    if name in store.names():
        if describe_kb(settings, name, backend=to).manifest.migrating_from != mark:
            raise IndexStateError(
                f"knowledge base {name!r} already exists in the {to} store; delete it or "
                "migrate under another --name"
            )
        try:
            return open_kb(settings, name, embedder, backend=to), True, False
        except IndexStateError:  # our embedded copy, killed mid-batch: rebuilt from scratch
            delete_kb(settings, name, backend=to)
    if isinstance(store, LoadsInOneWrite):
        staged = store.create_staged(name, embedder, chunking=dict(source.manifest.chunking))
        staged.manifest.migrating_from = mark
        return staged, False, True
    dense = source.manifest.dense_backend  # a server store's name means nothing to files
    target = create_kb(
        settings,
        name,
        embedder,
        backend=to,
        dense_backend="flat" if dense in ("qdrant", "pgvector") else dense,
    )
    target.manifest.chunking = dict(source.manifest.chunking)
    target.manifest.migrating_from = mark
    target.save()
    return target, False, False


def migrate(
    settings: Settings,
    name: str,
    to: Backend,
    *,
    new_name: str | None = None,
    source: Backend | None = None,
    progress: Progress = _quiet,
) -> MigrationReport:
    """Copies ``name`` from the ``source`` store (``source_backend``) to the ``to`` store."""
    origin = source_backend(settings, to, source)
    info = describe_kb(settings, name, backend=origin).manifest
    embedder = StoredVectorsOnly(info.embedding_model, info.dim)
    kb = open_kb(settings, name, embedder, backend=origin)
    target_name = new_name or name
    mark = f"{origin}:{name}"
    report = MigrationReport(f"{origin}:{name}", f"{to}:{target_name}")
    target, report.resumed, one_write = _target(settings, target_name, to, kb, mark)
    crashpoint("migrate.target_ready")
    try:
        _copy(kb, target, report, progress, save_batches=not one_write)
    finally:
        kb.close()
        target.close()
    return report


def _copy(
    source: WritableKB,
    target: WritableKB,
    report: MigrationReport,
    progress: Progress,
    *,
    save_batches: bool = True,
) -> None:
    children = source.children()
    parents = source.parents()
    if isinstance(target, PinsAvgdl):  # BM25 weights as the source computed them
        lengths = document_lengths([c.text for c in children])
        target.pin_avgdl(sum(lengths) / max(len(lengths), 1))
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in parents + children:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    rows = source.catalogue.documents()
    files = dict(source.catalogue.files())
    done = target.catalogue.known_documents(r.doc_id for r in rows)
    total = len(children)
    copied = 0
    batch: list[DocumentRow] = []
    for row in rows:
        if row.doc_id in done:
            report.skipped_documents += 1
            copied += sum(not c.is_parent for c in by_doc.get(row.doc_id, []))
            continue
        batch.append(row)
        size = sum(not c.is_parent for r in batch for c in by_doc.get(r.doc_id, []))
        if size >= _BATCH_CHILDREN:
            copied += _write(source, target, batch, by_doc, files, report, save_batches)
            progress("copy", copied, total)
            batch = []
    if batch:
        copied += _write(source, target, batch, by_doc, files, report, save_batches)
    for path, sha in files.items():  # files whose documents were all duplicates elsewhere
        if target.catalogue.file_sha(path) != sha:
            target.catalogue.record_file(path, sha, "migrated")
    progress("copy", total, total)
    crashpoint("migrate.copied")  # every batch saved, the target still marked as migrating
    if isinstance(target, PinsAvgdl):
        lengths = document_lengths([c.text for c in children])
        target.manifest.bm25 = {
            **target.manifest.bm25,
            "tokens": sum(lengths),
            "indexed": len(lengths),
            "pinned_avgdl": None,
        }
    target.manifest.migrating_from = None
    if not save_batches:
        progress("index", 0, 1)
    target.save()
    if not save_batches:
        progress("index", 1, 1)
    report.children = target.child_count()
    report.parents = len(target.parents())
    report.documents = len(target.catalogue.documents())
    report.files = len(target.catalogue.files())
    expected = (source.child_count(), len(parents), len(rows))
    if (report.children, report.parents, report.documents) != expected:
        raise IndexStateError(
            f"migration of {report.source} ended with {report.children} children, "
            f"{report.parents} parents, {report.documents} documents; the source has "
            f"{expected}: run it again"
        )


def _write(
    source: WritableKB,
    target: WritableKB,
    rows: list[DocumentRow],
    by_doc: dict[str, list[Chunk]],
    files: dict[str, str],
    report: MigrationReport,
    save: bool,
) -> int:
    """One batch: chunks with their stored vectors, then document rows and their files, then
    a save (the point a re-run resumes from) unless the target is written in one go."""
    chunks = [c for r in rows for c in by_doc.get(r.doc_id, [])]
    children = [c for c in chunks if not c.is_parent]
    vectors = source.stored_vectors([c.chunk_id for c in children]) if children else None
    if children and vectors is None:
        raise IndexStateError(f"{report.source}: some chunks have no stored vector")
    target.add_chunks(
        chunks,
        vectors=vectors if vectors is not None else np.zeros((0, source.embedder.dim), np.float32),
        save=False,
    )
    crashpoint("migrate.chunks_written")
    for row in rows:
        target.add_document_row(row)
        if row.file_path and row.file_path in files:
            target.catalogue.record_file(row.file_path, files[row.file_path], row.added_at)
    crashpoint("migrate.rows_written")
    if save:
        target.save()
        crashpoint("migrate.batch_saved")
    return len(children)
