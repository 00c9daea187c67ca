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

from ragchat.crashpoints import crashpoint
from ragchat.errors import DocumentNotFound, IndexStateError, IngestError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.pipeline import load_file
from ragchat.ingest.registry import iter_files
from ragchat.ingest.text_utils import too_much_text
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


@dataclass(frozen=True)
class UploadCaps:
    """Per-file and per-call caps on extracted characters and searchable chunks (0 = none),
    from ``IngestLimits``; a file over one fails alone with a reason naming the cap."""

    file_chars: int = 0
    file_chunks: int = 0
    total_chars: int = 0
    total_chunks: int = 0
    user_chunks: int = 0  # the uploader's quota, of which ``user_used`` are already stored
    user_used: int = 0

    def refusal(self, chars: int, chunks: int, chars_before: int, chunks_before: int) -> str | None:
        """Why a file of ``chars`` characters and ``chunks`` chunks does not fit after
        ``chars_before`` and ``chunks_before`` of the same upload (None: it fits). The one
        place the caps are checked: the ingest and the child's warm-up both ask it."""
        if self.file_chars and chars > self.file_chars:
            return too_much_text(self.file_chars)
        if self.file_chunks and chunks > self.file_chunks:
            return f"too many chunks: {chunks:,} (at most {self.file_chunks:,} per file)"
        if self.total_chars and chars_before + chars > self.total_chars:
            return (
                f"the upload's text limit is reached ({self.total_chars:,} characters per upload)"
            )
        if self.total_chunks and chunks_before + chunks > self.total_chunks:
            return f"the upload's chunk limit is reached ({self.total_chunks:,} per upload)"
        if self.user_chunks and self.user_used + chunks_before + chunks > self.user_chunks:
            return f"your upload quota is reached ({self.user_chunks:,} chunks per user)"
        return None


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
    """Each file succeeds or fails on its own (``report.errors``); the good ones are saved
    together at the end. ``progress`` is called between files and between embedding blocks:
    raising there (``IngestCancelled``) stops the call with nothing saved. ``load`` parses one
    file (``ingest.sandbox.ParseWorker.load`` bounds it in time and memory)."""
    start = time.perf_counter()
    report = IngestReport()
    caps = caps or UploadCaps()
    files = iter_files([Path(p) for p in paths])
    report.files = len(files)
    plans: list[_FilePlan] = []
    seen: set[str] = set()  # documents planned by an earlier file of this call
    totals = [0, 0]  # characters, chunks planned so far
    for i, path in enumerate(files):
        progress("read", i, len(files))
        try:
            key, sha = _digest(path)
        except OSError as exc:
            report.errors.append(IngestError(str(path), f"cannot read: {exc.strerror or exc}"))
            continue
        previous = kb.store.file_sha(key)
        if previous == sha:
            report.unchanged_files += 1
            continue
        try:
            plan = _plan_file(kb, path, key, sha, previous is not None, chunker, load, seen)
            _check_caps(str(path), plan, caps, totals)
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
        kb.store.record_file(plan.key, plan.sha, when)
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
    known = kb.store.known_documents(d.doc_id for d in docs) - leaving
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


def _check_caps(source: str, plan: _FilePlan, caps: UploadCaps, totals: list[int]) -> None:
    """Raises ``IngestError`` when this file is over a per-file cap, or would take the call
    over a per-upload one (then later, smaller files may still fit); else counts it."""
    chars, chunks = plan.chars, plan.children
    reason = caps.refusal(chars, chunks, totals[0], totals[1])
    if reason is not None:
        raise IngestError(source, reason)
    totals[0] += chars
    totals[1] += chunks


def _old_version_docs(kb: WritableKB, key: str) -> list[str]:
    """The documents only the old version of file ``key`` keeps alive (another recorded file
    with the old bytes keeps a document alive)."""
    store = kb.store
    return [
        d for d in store.docs_of_file(key) if not [p for p in store.paths_with_sha(d) if p != key]
    ]


def _forget_old_version(kb: WritableKB, key: str, kept: dict[str, str]) -> int:
    """Removes the documents of file ``key``'s old version, but those that another file of
    this call holds too (``kept``: document → that file); returns how many were deleted."""
    removed = 0
    for doc_id in kb.store.docs_of_file(key):
        copies = [p for p in kb.store.paths_with_sha(doc_id) if p != key]
        if not copies and kept.get(doc_id, key) != key:
            copies = [kept[doc_id]]
        if copies:
            kb.store.set_document_file(doc_id, copies[0])
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
