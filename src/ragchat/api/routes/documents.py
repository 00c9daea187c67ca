"""Knowledge base documents: upload (a background ingestion job), list, delete; job status.

Uploads land in the knowledge base the caller names (created for them when they have none by
that name); the uploader owns them. Shared documents (samples) can't be deleted over HTTP
(403); another user's upload is a 404, exactly like a missing document."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Response, UploadFile, status

from ragchat.api.bounds import IdPath, KbNamePath
from ragchat.api.deps import CurrentUser, State, Uploader
from ragchat.api.schemas import (
    ERRORS,
    DocumentOut,
    JobAccepted,
    JobOut,
    PassageOut,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.documents import Upload, check_kb_name, check_suffixes
from ragchat.api.state import AppState
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.ingest.registry import SUPPORTED_SUFFIXES
from ragchat.tenancy.documents import safe_filename

SUFFIXES = "Files: " + " ".join(SUPPORTED_SUFFIXES)
router = APIRouter(tags=["documents"], responses={**ERRORS, 403: ERRORS[404], 415: ERRORS[404]})


@router.get(
    "/passages/{chunk_id}",
    response_model=PassageOut,
    summary="The whole text of a cited passage (citations carry a preview)",
)
async def get_passage(chunk_id: IdPath, me: CurrentUser, state: State) -> PassageOut:
    kb, chunk, parent = await run_sync(state.documents.passage, me.user_id, chunk_id)
    kb = await run_sync(state.kbs.name_of, me.user_id, kb)
    context = parent if parent is not None and parent.strip() != chunk.text.strip() else None
    md = chunk.metadata
    return PassageOut(
        chunk_id=chunk.chunk_id,
        kb=kb,
        text=chunk.text,
        context=context,
        title=str(md.get("doc_title") or md.get("title") or ""),
        file=Path(chunk.source.split("#")[0]).name,
        location=chunk.location(),
    )


@router.post(
    "/kb/{name}/documents",
    response_model=JobAccepted,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Upload documents (multipart field 'files'); returns an ingestion job",
)
async def upload_documents(
    name: KbNamePath,
    me: Uploader,
    state: State,
    files: Annotated[list[UploadFile] | None, File(description=SUFFIXES)] = None,
) -> JobAccepted:
    """A knowledge base the caller does not have yet is created, private to them. Poll
    ``GET /jobs/{job_id}``. Needs a key or a cookie (401 otherwise); rate limited per user
    and per address."""
    check_kb_name(name)
    uploads = files or []
    check_suffixes([safe_filename(f.filename or "") for f in uploads])
    data = [Upload(f.filename or "upload", await f.read()) for f in uploads]
    kb = await run_sync(state.kbs.for_upload, me.user_id, name)
    paths = await run_sync(state.documents.save_uploads, me.user_id, kb.storage, data)
    job = await run_sync(state.documents.start_job, me.user_id, kb.storage, paths, me.address)
    return JobAccepted(job_id=job.id, kb=kb.name, status=job.status, files=[p.name for p in paths])


def document_outs(state: AppState, user_id: str, storage: str) -> list[DocumentOut]:
    """The documents of a knowledge base the caller may see, newest first."""
    try:
        views = state.documents.visible(user_id, storage)
    except KnowledgeBaseNotFound:  # created, nothing uploaded yet
        views = []
    out = []
    mine = state.documents.access.folders(user_id)
    for v in views:
        file, title = v.shown_to(mine)
        out.append(
            DocumentOut(
                doc_id=v.row.doc_id,
                title=title,
                file=file,
                kind=v.row.kind,
                chunks=v.row.n_children,
                sections=v.row.n_sections,
                added_at=v.row.added_at,
                shared=v.shared,
            )
        )
    out.sort(key=lambda d: d.added_at, reverse=True)
    return out


@router.get(
    "/kb/{name}/documents",
    response_model=list[DocumentOut],
    summary="Documents with chunk counts (shared ones and the caller's uploads)",
)
async def list_documents(name: KbNamePath, me: CurrentUser, state: State) -> list[DocumentOut]:
    check_kb_name(name)
    kb = await run_sync(state.kbs.resolve, me.user_id, name)
    return await run_sync(document_outs, state, me.user_id, kb.storage)


@router.delete(
    "/kb/{name}/documents/{doc_id}", status_code=204, summary="Delete one of your documents"
)
async def delete_document(
    name: KbNamePath, doc_id: IdPath, me: CurrentUser, state: State
) -> Response:
    kb = await run_sync(state.kbs.resolve, me.user_id, name)
    await run_sync(state.documents.delete, me.user_id, kb.storage, doc_id)
    return Response(status_code=204)


@router.get("/jobs/{job_id}", response_model=JobOut, summary="An ingestion job's progress")
async def get_job(job_id: IdPath, me: CurrentUser, state: State) -> JobOut:
    job = JobOut.model_validate(await run_sync(state.store.get_job, me.user_id, job_id))
    job.kb = await run_sync(state.kbs.name_of, me.user_id, job.kb)  # renamed since: its name now
    return job
