"""The write path from files to a knowledge base: dedupe by content hash, replace changed files,
chunk, embed only what is new, and report what happened."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragchat.crashpoints import crashpoint
from ragchat.errors import DocumentNotFound, IndexStateError, IngestError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.pipeline import load_file
from ragchat.ingestion.job import IngestJob, JobFile, UploadCaps, file_key
from ragchat.types import Chunk, LoadedDocument
from ragchat.vectorstores.base import DocumentRow, WritableKB
from ragchat.vectorstores.embedded.chunkstore import ChunkStore
from ragchat.vectorstores.embedded.generations import current
from ragchat.vectorstores.manifest import now_iso

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)
Loader = Callable[[Path], list[LoadedDocument]]
# Chunks per embedding call: progress (and a cancel) is seen between blocks. 32 (one batch of
# the default embedder) is ~0.3-1.2 s of a busy 2-core machine; 64 took up to 2.5 s there.
_EMBED_BLOCK = 32


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
    file_warnings: list[tuple[str, str]] = field(default_factory=list)  # (source, warning)


def all_unchanged(kb_dir: Path, files: Sequence[JobFile]) -> int | None:
    """How many files there are when every one is already in the knowledge base at ``kb_dir``
    with the same bytes, else None. Reads only the chunk store: a re-run of an ingest that
    has nothing to do need not load the embedding model (seconds of start-up)."""
    try:
        gen = current(kb_dir)
    except IndexStateError:
        return None
    if gen is None or not files or any(f.sha is None for f in files):
        return None
    try:
        store = ChunkStore(gen.dir / "chunks.sqlite")
    except IndexStateError:
        return None
    try:
        if any(store.file_sha(f.key) != f.sha for f in files):
            return None
    finally:
        store.close()
    return len(files)


@dataclass
class _FilePlan:
    """One new or changed file, parsed and chunked, not yet applied to the knowledge base."""

    key: str
    sha: str
    replaces: bool
    chunks: list[Chunk]
    rows: list[DocumentRow]
    duplicates: int
    sections: int
    pages: int
    warnings: list[tuple[str, str]]  # (document source, warning)
    kept: set[str] = field(default_factory=set)  # stored documents this file also holds
    chars: int = 0  # extracted text of the documents it adds

    @property
    def children(self) -> int:
        return sum(not c.is_parent for c in self.chunks)


def ingest_paths(
    kb: WritableKB,
    paths: Sequence[Path],
    chunker: Chunker,
    *,
    progress: Progress = _no_progress,
    load: Loader = load_file,
    caps: UploadCaps | None = None,
) -> IngestReport:
    """``ingest_job`` of the job made of these files (the CLI, the bootstrap, evaluations)."""
    job = IngestJob.build(paths, chunker, caps=caps)
    return ingest_job(kb, job, progress=progress, load=load)


def ingest_job(
    kb: WritableKB,
    job: IngestJob,
    *,
    progress: Progress = _no_progress,
    load: Loader = load_file,
) -> IngestReport:
    """Each file succeeds or fails on its own (``report.errors``); the good ones are saved
    together at the end. ``progress`` is called between files and between embedding blocks:
    raising there (``IngestCancelled``) stops the call with nothing saved. ``load`` parses one
    file (``ingest.sandbox.ParseWorker.load`` bounds it in time and memory). A file's hash is
    the one the job carries."""
    start = time.perf_counter()
    report = IngestReport()
    files = job.files
    report.files = len(files)
    plans: list[_FilePlan] = []
    seen: set[str] = set()  # documents planned by an earlier file of this call
    meter = job.caps.meter()
    for i, file in enumerate(files):
        progress("read", i, len(files))
        path, key, sha = file.path, file.key, file.sha
        if sha is None:
            report.errors.append(IngestError(str(path), f"cannot read: {file.error}"))
            continue
        previous = kb.catalogue.file_sha(key)
        if previous == sha:
            report.unchanged_files += 1
            continue
        try:
            plan = _plan_file(kb, path, key, sha, previous is not None, job.chunker, load, seen)
            reason = meter.admit(plan.chars, plan.children)
            if reason is not None:  # over a per-file cap, or over a per-upload one
                raise IngestError(str(path), reason)
        except IngestError as exc:
            report.errors.append(exc)
            log.warning("skipped %s", exc)
            continue
        crashpoint("ingest.parse")
        seen.update(r.doc_id for r in plan.rows)
        plans.append(plan)
        report.file_warnings.extend(plan.warnings)
        report.warnings.extend(f"{source}: {w}" for source, w in plan.warnings)
    progress("read", len(files), len(files))
    if not plans:  # nothing new or changed: leave the index files untouched
        report.seconds = time.perf_counter() - start
        return report

    chunks = [c for plan in plans for c in plan.chunks]
    children = [c for c in chunks if not c.is_parent]
    vectors = _embed(kb, [c.text for c in children], progress)
    crashpoint("ingest.embed")
    kept = {d: plan.key for plan in plans for d in plan.kept}
    for plan in plans:  # nothing is changed before this point: a cancel leaves no trace
        if plan.replaces:
            report.removed_documents += _forget_old_version(kb, plan.key, kept)
            report.replaced_files += 1
        else:
            report.added_files += 1
        report.documents += len(plan.rows)
        report.duplicate_documents += plan.duplicates
        report.sections += plan.sections
        report.pages += plan.pages
    report.children = len(children)
    report.parents = len(chunks) - len(children)
    # The order matters to a store without transactions (Qdrant): chunks, then documents,
    # then files, then the manifest, so a re-run after a crash rewrites what is missing.
    kb.add_chunks(chunks, vectors=vectors, save=False)
    crashpoint("ingest.chunks")
    for plan in plans:
        for row in plan.rows:
            kb.add_document_row(row)
    crashpoint("ingest.documents")
    when = now_iso()
    for plan in plans:
        kb.catalogue.record_file(plan.key, plan.sha, when)
    kb.save()
    report.seconds = time.perf_counter() - start
    return report


def _plan_file(
    kb: WritableKB,
    path: Path,
    key: str,
    sha: str,
    replaces: bool,
    chunker: Chunker,
    load: Loader,
    seen: set[str],
) -> _FilePlan:
    """Parses and chunks one file without touching the knowledge base. A document already
    stored is a duplicate unless it is stored only because of this file's old version (which
    is about to be removed): then it is added again."""
    docs = load(path)
    leaving = set(_old_version_docs(kb, key)) if replaces else set()
    known = kb.catalogue.known_documents(d.doc_id for d in docs) - leaving
    plan = _FilePlan(key, sha, replaces, [], [], 0, 0, 0, [])
    mine: set[str] = set()
    for doc in docs:
        if doc.doc_id in known or doc.doc_id in seen or doc.doc_id in mine:
            plan.duplicates += 1
            if doc.doc_id in known:
                plan.kept.add(doc.doc_id)
            continue
        mine.add(doc.doc_id)
        plan.warnings.extend((doc.source, w) for w in doc.warnings)
        try:
            doc_chunks = chunker.chunk(doc)
        except RecursionError as exc:
            raise IngestError(str(path), "nested too deeply to chunk") from exc
        plan.chunks.extend(doc_chunks)
        plan.chars += sum(len(s.text) for s in doc.sections)
        plan.sections += len(doc.sections)
        if doc.kind == "pdf":
            plan.pages += len(doc.sections)
        plan.rows.append(
            DocumentRow(
                doc.doc_id,
                doc.source,
                doc.kind,
                doc.title,
                key,
                sum(not c.is_parent for c in doc_chunks),
                len(doc.sections),
                dict(doc.metadata),
                now_iso(),
            )
        )
    return plan


def _old_version_docs(kb: WritableKB, key: str) -> list[str]:
    """The documents only the old version of file ``key`` keeps alive (another recorded file
    with the old bytes keeps a document alive)."""
    catalogue = kb.catalogue
    return [
        d
        for d in catalogue.docs_of_file(key)
        if not [p for p in catalogue.paths_with_sha(d) if p != key]
    ]


def _forget_old_version(kb: WritableKB, key: str, kept: dict[str, str]) -> int:
    """Removes the documents of file ``key``'s old version, but those that another file of
    this call holds too (``kept``: document → that file); returns how many were deleted."""
    removed = 0
    for doc_id in kb.catalogue.docs_of_file(key):
        copies = [p for p in kb.catalogue.paths_with_sha(doc_id) if p != key]
        if not copies and kept.get(doc_id, key) != key:
            copies = [kept[doc_id]]
        if copies:
            kb.catalogue.set_document_file(doc_id, copies[0])
            continue
        kb.delete_document(doc_id, save=False)
        removed += 1
    return removed


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
        key = None if kb.catalogue.has_document(target) else file_key(Path(target))
        doc_ids = [target] if key is None else kb.catalogue.docs_of_file(key)
        if key is not None and not doc_ids and kb.catalogue.file_sha(key) is None:
            raise DocumentNotFound(
                f"{target!r} is neither a document id nor an ingested file "
                f"of knowledge base {kb.name!r}"
            )
        for doc_id in doc_ids:
            kb.delete_document(doc_id, save=False)
            removed += 1
        if key is not None:
            kb.catalogue.forget_file(key)
    kb.save()
    return removed


def prune_missing(kb: WritableKB, under: Sequence[Path]) -> int:
    """Deletes documents of files that were ingested from these folders but no longer exist."""
    roots = [str(Path(p).resolve()) for p in under]
    gone = [
        p
        for p, _ in kb.catalogue.files()
        if any(p.startswith(r) for r in roots) and not Path(p).exists()
    ]
    return remove_paths(kb, gone) if gone else 0
