"""Document uploads: files saved under ``uploads_dir(settings)/<kb>/<user_id>/``, ingested by a
background worker that reports progress into the store's job row.

Who sees what is ``DocumentAccess``'s business (see ``access.py``): shared documents (samples,
``ragchat ingest``) are listed for everyone and deletable by no one over HTTP (403); a user's
uploads are theirs alone — another user's upload is invisible (404, like a missing document)
and never retrieved for them."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragchat.api.errors import ApiError
from ragchat.errors import IngestCancelled, KnowledgeBaseNotFound, RagchatError
from ragchat.ingest.registry import SUPPORTED_SUFFIXES, iter_files
from ragchat.ingest.sandbox import ParseLimits, ParseWorker
from ragchat.ingestion.job import IngestJob, UploadCaps, chunker_for, file_key, hash_file
from ragchat.ingestion.worker import Ingester, InProcessIngester
from ragchat.settings import ApiSettings, Settings
from ragchat.store.base import Store
from ragchat.store.rows import JobRow, JobStatus
from ragchat.tenancy.documents import DocumentAccess, DocumentView, safe_filename, user_folder
from ragchat.types import Chunk
from ragchat.vectorstores.lock import LOCK_TIMEOUT_S
from ragchat.vectorstores.names import validate_name

from .job_result import docs_of_bytes, drop_textless, job_result, redact
from .jobs import FairJobQueue

log = logging.getLogger(__name__)

_PROGRESS_EVERY_S = 0.25
# Share of the job's progress bar per ingestion stage (reading files, then embedding chunks).
_STAGES = {"read": (0.0, 0.15), "embed": (0.15, 0.95), "save": (0.95, 0.95)}
INTERRUPTED_JOB_MESSAGE = (
    "interrupted: the server restarted before this upload was ingested; upload the file again"
)
SHUTDOWN_JOB_MESSAGE = (
    "interrupted: the server shut down during this upload and nothing of it was saved; "
    "upload the files again to resume (files already in the knowledge base are skipped)"
)


@dataclass(frozen=True)
class Upload:
    filename: str
    data: bytes


def check_kb_name(name: str) -> str:
    """Before anything is saved: ``InvalidKnowledgeBaseName`` (400 invalid_kb_name)."""
    return validate_name(name)


def check_suffixes(filenames: Sequence[str]) -> None:
    """At least one file, each of a type ragchat reads (nothing is saved otherwise); the
    415 names each one that is not, with its type."""
    if not filenames:
        raise ApiError(400, "no_files", "Attach at least one file (multipart field 'files').")
    bad = [n for n in filenames if Path(n).suffix.lower() not in SUPPORTED_SUFFIXES]
    if bad:
        named = ", ".join(f"{n} ({Path(n).suffix.lower() or 'no suffix'})" for n in bad)
        raise ApiError(
            415,
            "unsupported_file_type",
            f"Unsupported file type: {named}; supported: {' '.join(SUPPORTED_SUFFIXES)}.",
        )


def recover_jobs(store: Store, api: ApiSettings) -> int:
    """Start-up recovery of upload jobs. ``api.recovery == "all"``: every unfinished job, safe
    because one server process owns its data directory (``api/datadir.py``) and its database
    (a worker of ``serve --workers N`` never calls this: its parent does, once, before the
    workers start). ``"expired"`` (several servers share the database): only the jobs whose
    lease ran out (``leases.py``); the others are alive on another machine."""
    if api.recovery == "expired":
        failed = len(
            store.expire_jobs(
                timedelta(seconds=api.lease_s), INTERRUPTED_JOB_MESSAGE, {"interrupted": True}
            )
        )
    else:
        failed = store.fail_unfinished_jobs(INTERRUPTED_JOB_MESSAGE)
    if failed:
        log.warning("marked %d upload job(s) interrupted by a restart as failed", failed)
    return failed


class DocumentService:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        access: DocumentAccess,
        executor: FairJobQueue,
        ingester: Ingester | None = None,
    ) -> None:
        """``executor``: the fair queue upload jobs wait in; ``ingester``: where they parse and
        embed (``ingestion/worker.py``: a child process, or this one by default)."""
        self.settings = settings
        self.store = store
        self.access = access
        self.registry = access.registry
        self.executor = executor
        self.ingester = ingester or InProcessIngester()
        self.uploads = access.uploads
        limits = settings.ingest
        self.caps = UploadCaps(
            limits.max_file_chars,
            limits.max_file_chunks,
            limits.max_upload_chars,
            limits.max_upload_chunks,
            limits.max_user_chunks,
        )
        self.parser = ParseWorker(
            ParseLimits(
                timeout_s=limits.parse_timeout_s,
                memory_mb=limits.parse_memory_mb,
                max_chars=limits.max_file_chars,
                max_pages=limits.max_pdf_pages,
            )
        )
        self._cancel = threading.Event()
        self._jobs_lock = threading.Lock()
        # This process's queued and running jobs: id → (knowledge base, files).
        self._unfinished: dict[str, tuple[str, list[Path]]] = {}
        self._owners: dict[str, str] = {}  # job id → uploader, for the per-user quota

    # -- ownership -----------------------------------------------------------------------------
    def visible(self, user_id: str, kb: str) -> list[DocumentView]:
        return self.access.visible(user_id, kb)

    def counts(self, user_id: str, kbs: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(documents, chunks) of each knowledge base that ``user_id`` may see: other people's
        uploads are not counted, so the numbers tell nobody what someone else uploaded."""
        out = {}
        for kb in kbs:
            views = self.visible(user_id, kb)
            out[kb] = (len(views), sum(v.row.n_children for v in views))
        return out

    def passage(self, user_id: str, chunk_id: str) -> tuple[str, Chunk, str | None]:
        """(knowledge base, chunk, parent text) for a cited chunk the caller may see: a citation
        carries only a preview, the source panel shows the whole passage. Another user's upload
        is a 404. One read of the knowledge base serves the chunk, its owner and its parent."""
        for kb in self.registry.names():
            with self.registry.reading(kb) as base:
                found = base.get_chunks([chunk_id])
                if not found:
                    continue
                chunk = found[0]
                views = self.access.views(kb, base)
                parent = base.get_chunks([chunk.parent_id]) if chunk.parent_id else []
            view = next((v for v in views if v.row.doc_id == chunk.doc_id), None)
            if view is not None and self.access.filter(user_id, kb, [view]):
                label = view.label_for(self.access.folders(user_id))
                if label is not None:
                    chunk = chunk.named(label)
                return kb, chunk, parent[0].text if parent else None
            break
        raise ApiError(404, "not_found", "passage not found")

    # -- upload and ingestion ------------------------------------------------------------------
    def save_uploads(self, user_id: str, kb: str, files: Sequence[Upload]) -> list[Path]:
        """Writes the files (validated first: nothing is saved if one is refused)."""
        check_kb_name(kb)
        names = [safe_filename(f.filename) for f in files]
        check_suffixes(names)
        folder = self.uploads / kb / user_folder(user_id)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, upload in zip(names, files, strict=True):
            path = folder / name
            tmp = path.with_name(f".{name}.part")
            tmp.write_bytes(upload.data)
            tmp.replace(path)
            paths.append(path)
        return paths

    def start_job(
        self, user_id: str, kb: str, paths: Sequence[Path], address: str | None = None
    ) -> JobRow:
        """Queues the job fairly between users and between client ``address``es."""
        job = self.store.create_job(user_id, kb, total=len(paths), message="queued")
        with self._jobs_lock:
            self._unfinished[job.id] = (kb, list(paths))
            self._owners[job.id] = user_id
        self.executor.submit(user_id, self.run_job, job.id, kb, list(paths), address=address)
        return job

    def fail_interrupted_jobs(self) -> int:
        """At start-up, before any upload: fails the jobs left "queued" or "running" by a
        process that died or restarted mid-job (nothing will ever finish them; without this the
        page's progress would never end): ``recover_jobs``."""
        return recover_jobs(self.store, self.settings.api)

    def unfinished(self) -> list[str]:
        """Ids of this process's queued and running jobs (their leases: ``leases.py``)."""
        with self._jobs_lock:
            return list(self._unfinished)

    def cancel(self) -> None:
        """The server is stopping: the running job stops at its next safe point (between
        files, between embedding blocks, or at once while a file is being parsed) with
        nothing saved, and no queued job starts. Returns at once; safe from a signal handler's
        thread and callable more than once."""
        self._cancel.set()
        self.parser.cancel()

    def shutdown(self) -> None:
        """``cancel``, wait for the running job to reach its safe point, mark every job of
        this process that did not finish as interrupted, and stop the parser process."""
        self.cancel()
        self.executor.shutdown(wait=True, cancel_futures=True)
        with self._jobs_lock:
            left = dict(self._unfinished)
        for job_id, (kb, paths) in left.items():  # queued, never started
            self._interrupted(job_id, kb, paths)
        self.parser.close()

    def run_job(self, job_id: str, kb: str, paths: list[Path]) -> None:
        """The worker: ingest, then record the outcome. Never raises (the job row says why).
        Each file succeeds or fails on its own; a failed file is removed from disk."""
        try:
            if self._cancel.is_set():
                self._interrupted(job_id, kb, paths)
                return
            self.store.update_job(job_id, status="running", message="reading files")
            self._ingest(job_id, kb, paths)
        finally:
            with self._jobs_lock:
                self._unfinished.pop(job_id, None)
                self._owners.pop(job_id, None)

    def _ingest(self, job_id: str, kb: str, paths: list[Path]) -> None:
        progress = _JobProgress(self.store, job_id, self._cancel)
        job: IngestJob | None = None
        try:
            job = self._job(job_id, kb, paths)
            # A child ingester parses and embeds on entering the session, before the writer
            # lock: another upload to this knowledge base waits only for the save.
            with (
                self.ingester.session(
                    job, progress=progress, load=self.parser.load, cancel=self._cancel
                ) as ingest,
                self.registry.writing(
                    kb, create=True, on_wait=progress.waiting(kb), cancel=self._cancel
                ) as target,
            ):
                before = {p: target.catalogue.file_sha(file_key(p)) for p in paths}
                report = ingest(target)
                drop_textless(target, paths, report)
                doc_ids = {p.name: docs_of_bytes(target.catalogue, file_key(p)) for p in paths}
                fresh = {
                    d
                    for p in paths
                    if target.catalogue.file_sha(file_key(p)) not in (None, before[p])
                    for d in doc_ids[p.name]
                }
                rows = target.catalogue.documents()
                sizes = {r.doc_id: r.n_children for r in rows if r.doc_id in fresh}
        except IngestCancelled:
            self._interrupted(job_id, kb, paths, job)
            return
        except Exception as exc:
            log.exception("ingestion job %s failed", job_id)
            reason = redact(str(exc), paths, self.settings.data_dir)
            self.store.update_job(job_id, status="failed", message=f"ingestion failed: {reason}")
            self._remove_files(job_id, kb, paths, job)
            return
        result = job_result(report, doc_ids, sizes, paths, self.settings.data_dir)
        ok = report.added_files + report.replaced_files + report.unchanged_files
        status: JobStatus = "failed" if report.errors and not ok else "done"
        message = f"{result['documents']} document(s), {result['chunks']} chunks"
        if report.errors:
            message += f"; {len(report.errors)} file(s) failed"
        self._remove_files(job_id, kb, paths, job)
        self.store.update_job(
            job_id,
            status=status,
            progress=1.0,
            done=len(paths),
            message=message,
            result=result,
        )
        log.info("ingestion job %s %s: %s", job_id, status, message)

    def _job(self, job_id: str, kb: str, paths: Sequence[Path]) -> IngestJob:
        """The job, built here once: the caps (before a new knowledge base exists to be
        opened), the knowledge base's own chunker (a new one's: the settings'), each file
        hashed, and those the live knowledge base holds unchanged."""
        caps = self._caps_for(job_id)
        keys = [file_key(p) for p in iter_files(paths)]
        try:
            with self.registry.reading(kb) as live:
                chunker = chunker_for(live, self.settings.chunking)
                held = {key: live.catalogue.file_sha(key) for key in keys}
        except RagchatError:  # no such knowledge base yet, or unreadable
            chunker, held = chunker_for(None, self.settings.chunking), {}
        return IngestJob.build(
            paths, chunker, caps=caps, parse_limits=self.parser.limits, held=held.get
        )

    def _caps_for(self, job_id: str) -> UploadCaps:
        """The caps with the uploader's stored chunks counted against their quota."""
        with self._jobs_lock:
            user_id = self._owners.get(job_id)
        if user_id is None or not self.caps.user_chunks:
            return self.caps
        mine = self.access.folders(user_id)
        used = 0
        for name in self.registry.names():
            try:
                views = self.access.views(name)
            except RagchatError:  # an unreadable knowledge base holds nothing to count
                continue
            used += sum(v.row.n_children for v in views if not v.shared and v.owners & mine)
        return replace(self.caps, user_used=used)

    def _interrupted(
        self, job_id: str, kb: str, paths: Sequence[Path], job: IngestJob | None = None
    ) -> None:
        """Marks a job stopped by a shutdown (its files, none saved, are removed)."""
        self._remove_files(job_id, kb, paths, job)
        self.store.update_job(
            job_id,
            status="failed",
            message=SHUTDOWN_JOB_MESSAGE,
            result={"interrupted": True, "files": len(paths)},
        )
        log.warning("ingestion job %s interrupted by the shutdown; nothing of it was saved", job_id)

    def _remove_files(
        self, job_id: str, kb: str, paths: Sequence[Path], job: IngestJob | None = None
    ) -> None:
        """Deletes job ``job_id``'s uploaded files whose bytes did not land in the knowledge
        base (a failed or interrupted file is of no use on the server), unless another job
        still queued will read the same path. When the knowledge base cannot be read, nothing
        is deleted. The bytes' hashes are ``job``'s (a job never built hashes them here)."""
        try:
            with self.registry.reading(kb) as live:  # readers wait: no hashing in here
                recorded = {p: live.catalogue.file_sha(file_key(p)) for p in paths}
        except KnowledgeBaseNotFound:
            recorded = {}
        except Exception:
            log.exception("job %s: its files are kept (knowledge base %s unreadable)", job_id, kb)
            return
        keep = {p for p in paths if recorded.get(p) is not None and recorded[p] == _sha(p, job)}
        with self._jobs_lock:
            wanted = {p for j, (_, ps) in self._unfinished.items() if j != job_id for p in ps}
        for path in paths:
            if path not in keep and path not in wanted:
                path.unlink(missing_ok=True)

    # -- deletion ------------------------------------------------------------------------------
    def delete(self, user_id: str, kb: str, doc_id: str) -> None:
        """Removes the caller's copy of the document; the document leaves the index only when
        no one else uploaded the same bytes."""
        check_kb_name(kb)
        views = {v.row.doc_id: v for v in self.visible(user_id, kb)}
        view = views.get(doc_id)
        if view is None:
            raise ApiError(404, "not_found", "document not found")
        if view.shared:
            raise ApiError(
                403,
                "forbidden",
                "Shared documents (samples, ingested from the command line) cannot be deleted "
                "over HTTP; use `ragchat kb remove`.",
            )
        mine = self.access.folders(user_id)
        own = [p for p in view.sources if self.access.owner_of_path(kb, p) in mine]
        rest = [p for p in view.sources if p not in own]
        if not own:  # the owner's document of a knowledge base they shared
            raise ApiError(403, "forbidden", "Only the person who uploaded it can delete it.")
        # A request does not wait out another upload's save for long: it says try again.
        with self.registry.writing(kb, timeout_s=LOCK_TIMEOUT_S) as target:
            if rest:
                if view.row.file_path in own:
                    target.catalogue.set_document_file(doc_id, rest[0])
            else:
                target.delete_document(doc_id, save=False)
            for path in own:
                if not target.catalogue.docs_of_file(path):
                    target.catalogue.forget_file(path)
                    Path(path).unlink(missing_ok=True)
            target.save()


def _sha(path: Path, job: IngestJob | None) -> str | None:
    """The hash of ``path``'s bytes: the one ``job`` carries, else computed now."""
    if job is not None:
        return job.sha_of(path)
    try:
        return hash_file(path)
    except OSError:
        return None


class _JobProgress:
    """The ingest callback: throttled writes of (stage, done, total) into the job row. Called
    at the ingestion's safe points, it is where a shutdown stops the job (``cancel``)."""

    def __init__(self, store: Store, job_id: str, cancel: threading.Event) -> None:
        self.store = store
        self.job_id = job_id
        self.cancel = cancel
        self._last = 0.0
        self._lock = threading.Lock()

    def waiting(self, kb: str) -> Callable[[], None]:
        """What the job says while another upload (in any server worker) writes ``kb``."""

        def say() -> None:
            self.store.update_job(
                self.job_id,
                message=f"waiting for another upload to knowledge base {kb} to finish",
            )

        return say

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.cancel.is_set():
            raise IngestCancelled("the server is shutting down")
        start, end = _STAGES.get(stage, (0.0, 0.95))
        fraction = start + (end - start) * (done / total if total else 1.0)
        now = time.monotonic()
        with self._lock:
            if done < total and now - self._last < _PROGRESS_EVERY_S:
                return
            self._last = now
        kwargs: dict[str, Any] = {"progress": fraction, "message": f"{stage} {done}/{total}"}
        if stage == "read":
            kwargs["done"] = done
        self.store.update_job(self.job_id, **kwargs)
