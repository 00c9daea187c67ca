"""What an upload job reports to its uploader: file names and reasons, never a server path
(the upload folder holds the user id), and counts that do not reveal whether someone else
uploaded the same bytes first."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingestion.ingest import IngestReport
from ragchat.ingestion.job import file_key
from ragchat.vectorstores.base import Catalogue, WritableKB

NO_TEXT = "no text could be read from it"


def docs_of_bytes(store: Catalogue, key: str) -> list[str]:
    """The documents a file's bytes hold, whoever's copy they were first ingested from."""
    sha = store.file_sha(key)
    paths = store.paths_with_sha(sha) if sha is not None else [key]
    return sorted({d for p in paths for d in store.docs_of_file(p)})


def redact(text: str, paths: Sequence[Path], data_dir: Path) -> str:
    """``text`` without server paths: each uploaded file's path becomes its name, anything
    else under the data directory (the uploader's id is part of the upload folder) goes."""
    for path in paths:
        for form in sorted({str(path.resolve()), str(path)}, key=len, reverse=True):
            text = text.replace(form, path.name)
    root = str(data_dir.resolve())  # absolute: a relative "." must not strip every dot
    if len(root) > 1:
        text = text.replace(root + "/", "").replace(root, "")
    return text


def job_result(
    report: IngestReport,
    doc_ids: dict[str, list[str]],
    sizes: dict[str, int],
    paths: Sequence[Path],
    data_dir: Path,
) -> dict[str, Any]:
    """The job result as its uploader sees it: file names, never server paths. ``sizes``:
    chunks per document of the files this job added or changed, counted the same whether or
    not someone else uploaded the same bytes first (sharing the work of embedding them must
    not tell them so); an unchanged re-upload of their own file counts nothing."""
    return {
        "files": report.files,
        "added_files": report.added_files,
        "replaced_files": report.replaced_files,
        "unchanged_files": report.unchanged_files,
        "documents": len(sizes),
        "chunks": sum(sizes.values()),
        "seconds": round(report.seconds, 3),
        "doc_ids": doc_ids,
        "errors": [
            {"file": Path(e.source).name, "reason": redact(e.reason, paths, data_dir)}
            for e in report.errors
        ],
        "warnings": [
            redact(f"{Path(source).name}: {warning}", paths, data_dir)
            for source, warning in report.file_warnings[:20]
        ],
    }


def drop_textless(target: WritableKB, paths: Sequence[Path], report: IngestReport) -> int:
    """Files of this upload that gave no searchable text (an empty file, a blank Word
    document, frontmatter only) are failed files with their reason, not "done" documents
    of 0 chunks that stay listed and answer nothing: their documents and file records leave
    ``target`` (saved), and ``report`` counts them as errors. Returns how many."""
    sizes = {row.doc_id: row.n_children for row in target.catalogue.documents()}
    why = {Path(source).name: warning for source, warning in report.file_warnings}
    failed = {e.source for e in report.errors}
    dropped = 0
    for path in paths:
        key = file_key(path)
        docs = target.catalogue.docs_of_file(key)
        if not docs or any(sizes.get(d, 0) for d in docs) or key in failed:
            continue
        for doc_id in docs:
            target.delete_document(doc_id, save=False)
        target.catalogue.forget_file(key)
        reason = "the file is empty" if _empty(path) else why.get(path.name) or NO_TEXT
        report.errors.append(IngestError(key, reason))
        report.file_warnings = [
            (s, w) for s, w in report.file_warnings if Path(s).name != path.name
        ]
        report.added_files = max(0, report.added_files - 1)
        dropped += 1
    if dropped:
        target.save()
    return dropped


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False
