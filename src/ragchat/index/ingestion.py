"""The write path from files to a knowledge base: dedupe by content hash, replace changed files,
chunk, embed only what is new, and report what happened."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragchat.errors import DocumentNotFound, IndexStateError, IngestError
from ragchat.index.base import WritableKB
from ragchat.index.chunkstore import ChunkStore, DocumentRow
from ragchat.index.crashpoints import crashpoint
from ragchat.index.generations import current
from ragchat.index.manifest import now_iso
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.registry import iter_files, loader_for
from ragchat.types import Chunk, LoadedDocument

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)
_EMBED_BLOCK = 256


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclass
class IngestReport:
    files: int = 0
    added_files: int = 0
    replaced_files: int = 0
    unchanged_files: int = 0
    documents: int = 0
    duplicate_documents: int = 0
    pages: int = 0
    sections: int = 0
    children: int = 0
    parents: int = 0
    removed_documents: int = 0
    seconds: float = 0.0
    errors: list[IngestError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def file_key(path: Path) -> str:
    return str(path.resolve())


def _digest(path: Path) -> tuple[str, str]:
    return file_key(path), hashlib.sha256(path.read_bytes()).hexdigest()


def all_unchanged(kb_dir: Path, paths: Sequence[Path]) -> int | None:
    """How many files there are when every one is already in the knowledge base at ``kb_dir``
    with the same bytes, else None. Reads only the chunk store: a re-run of an ingest that
    has nothing to do need not load the embedding model (seconds of start-up)."""
    try:
        gen = current(kb_dir)
    except IndexStateError:
        return None
    if gen is None:
        return None
    files = iter_files([Path(p) for p in paths])
    if not files:
        return None
    try:
        store = ChunkStore(gen.dir / "chunks.sqlite")
    except IndexStateError:
        return None
    try:
        for path in files:
            key, sha = _digest(path)
            if store.file_sha(key) != sha:
                return None
    except OSError:
        return None
    finally:
        store.close()
    return len(files)


def ingest_paths(
    kb: WritableKB,
    paths: Sequence[Path],
    chunker: Chunker,
    *,
    progress: Progress = _no_progress,
) -> IngestReport:
    start = time.perf_counter()
    report = IngestReport()
    files = iter_files([Path(p) for p in paths])
    report.files = len(files)
    pending: list[tuple[str, str, list[LoadedDocument]]] = []  # (file key, sha, docs)
    for i, path in enumerate(files):
        progress("read", i, len(files))
        try:
            key, sha = _digest(path)
        except OSError as exc:
            report.errors.append(IngestError(str(path), f"cannot read: {exc}"))
            continue
        previous = kb.store.file_sha(key)
        if previous == sha:
            report.unchanged_files += 1
            continue
        try:
            docs = loader_for(path).load(path)
        except IngestError as exc:
            report.errors.append(exc)
            log.warning("skipped %s", exc)
            continue
        crashpoint("ingest.parse")
        if previous is not None:
            for doc_id in kb.store.docs_of_file(key):
                # Another recorded file with the old bytes keeps the document alive.
                copies = [p for p in kb.store.paths_with_sha(doc_id) if p != key]
                if copies:
                    kb.store.set_document_file(doc_id, copies[0])
                    continue
                kb.delete_document(doc_id, save=False)
                report.removed_documents += 1
            report.replaced_files += 1
        else:
            report.added_files += 1
        pending.append((key, sha, docs))
    progress("read", len(files), len(files))
    if not pending:  # nothing new or changed: leave the index files untouched
        report.seconds = time.perf_counter() - start
        return report

    chunks: list[Chunk] = []
    rows: list[DocumentRow] = []
    seen: set[str] = set()
    known = kb.store.known_documents(d.doc_id for _, _, docs in pending for d in docs)
    for key, _, docs in pending:
        for doc in docs:
            if doc.doc_id in known or doc.doc_id in seen:
                report.duplicate_documents += 1
                continue
            seen.add(doc.doc_id)
            report.warnings.extend(f"{doc.source}: {w}" for w in doc.warnings)
            doc_chunks = chunker.chunk(doc)
            n_children = sum(not c.is_parent for c in doc_chunks)
            chunks.extend(doc_chunks)
            report.documents += 1
            report.sections += len(doc.sections)
            if doc.kind == "pdf":
                report.pages += len(doc.sections)
            rows.append(
                DocumentRow(
                    doc.doc_id,
                    doc.source,
                    doc.kind,
                    doc.title,
                    key,
                    n_children,
                    len(doc.sections),
                    dict(doc.metadata),
                    now_iso(),
                )
            )
    children = [c for c in chunks if not c.is_parent]
    report.children = len(children)
    report.parents = len(chunks) - len(children)
    vectors = _embed(kb, [c.text for c in children], progress)
    crashpoint("ingest.embed")
    # The order matters to a store without transactions (Qdrant): chunks, then documents,
    # then files, then the manifest, so a re-run after a crash rewrites what is missing.
    kb.add_chunks(chunks, vectors=vectors, save=False)
    crashpoint("ingest.chunks")
    for row in rows:
        kb.add_document_row(row)
    crashpoint("ingest.documents")
    when = now_iso()
    for key, sha, _ in pending:
        kb.store.record_file(key, sha, when)
    kb.save()
    report.seconds = time.perf_counter() - start
    return report


def _embed(kb: WritableKB, texts: list[str], progress: Progress) -> np.ndarray:
    """Embeds in length-sorted blocks so progress can be shown and padding stays small."""
    out = np.zeros((len(texts), kb.embedder.dim), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), _EMBED_BLOCK):
        progress("embed", start, len(texts))
        idx = order[start : start + _EMBED_BLOCK]
        out[idx] = kb.embedder.embed_documents([texts[i] for i in idx])
    progress("embed", len(texts), len(texts))
    return out


def remove_paths(kb: WritableKB, targets: Sequence[str]) -> int:
    """Deletes documents by doc id, or every document of an ingested file path."""
    removed = 0
    for target in targets:
        key = None if kb.store.has_document(target) else file_key(Path(target))
        doc_ids = [target] if key is None else kb.store.docs_of_file(key)
        if key is not None and not doc_ids and kb.store.file_sha(key) is None:
            raise DocumentNotFound(
                f"{target!r} is neither a document id nor an ingested file "
                f"of knowledge base {kb.name!r}"
            )
        for doc_id in doc_ids:
            kb.delete_document(doc_id, save=False)
            removed += 1
        if key is not None:
            kb.store.forget_file(key)
    kb.save()
    return removed


def prune_missing(kb: WritableKB, under: Sequence[Path]) -> int:
    """Deletes documents of files that were ingested from these folders but no longer exist."""
    roots = [str(Path(p).resolve()) for p in under]
    gone = [
        p
        for p, _ in kb.store.files()
        if any(p.startswith(r) for r in roots) and not Path(p).exists()
    ]
    return remove_paths(kb, gone) if gone else 0
