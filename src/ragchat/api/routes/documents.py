"""Knowledge base documents: upload (a background ingestion job), list, delete; job status.

Uploads land in the shared knowledge base (every agent over it can cite them); the uploader
owns them. Shared documents (samples) can't be deleted over HTTP (403); another user's upload
is a 404, exactly like a missing document."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Response, UploadFile, status

from ragchat.api.deps import CurrentUser, State
from ragchat.api.schemas import (
    ERRORS,
    DocumentOut,
    JobAccepted,
    JobOut,
    KnowledgeBaseOut,
    PassageOut,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.access import safe_filename
from ragchat.api.services.documents import Upload, check_kb_name, check_suffixes
from ragchat.ingest.registry import SUPPORTED_SUFFIXES

SUFFIXES = "Files: " + " ".join(SUPPORTED_SUFFIXES)
router = APIRouter(tags=["documents"], responses={**ERRORS, 403: ERRORS[404], 415: ERRORS[404]})


@router.get("/kb", response_model=list[KnowledgeBaseOut], summary="Knowledge bases")
async def list_kbs(me: CurrentUser, state: State) -> list[KnowledgeBaseOut]:
    report = await run_sync(state.health.knowledge_bases)
    ok = {
        n: bool(info.get("configured")) for n, info in report[0].items() if info["status"] == "ok"
    }
    seen = await run_sync(state.documents.counts, me.user_id, list(ok))
    return [
        KnowledgeBaseOut(name=name, documents=docs, chunks=chunks, configured=ok[name])
        for name, (docs, chunks) in seen.items()
        if docs or ok[name]
    ]


@router.get(
    "/passages/{chunk_id}",
    response_model=PassageOut,
    summary="The whole text of a cited passage (citations carry a preview)",
)
async def get_passage(chunk_id: str, me: CurrentUser, state: State) -> PassageOut:
    kb, chunk, parent = await run_sync(state.documents.passage, me.user_id, chunk_id)
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
    name: str,
    me: CurrentUser,
    state: State,
    files: Annotated[list[UploadFile] | None, File(description=SUFFIXES)] = None,
) -> JobAccepted:
    """The knowledge base is created if it does not exist. Poll ``GET /jobs/{job_id}``."""
    check_kb_name(name)
    uploads = files or []
    check_suffixes([safe_filename(f.filename or "") for f in uploads])
    data = [Upload(f.filename or "upload", await f.read()) for f in uploads]
    paths = await run_sync(state.documents.save_uploads, me.user_id, name, data)
    job = await run_sync(state.documents.start_job, me.user_id, name, paths)
    return JobAccepted(job_id=job.id, kb=name, status=job.status, files=[p.name for p in paths])


@router.get(
    "/kb/{name}/documents",
    response_model=list[DocumentOut],
    summary="Documents with chunk counts (shared ones and the caller's uploads)",
)
async def list_documents(name: str, me: CurrentUser, state: State) -> list[DocumentOut]:
    check_kb_name(name)
    views = await run_sync(state.documents.visible, me.user_id, name)
    out = []
    for v in views:
        file, title = v.shown_to(me.user_id)
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
    return out


@router.delete(
    "/kb/{name}/documents/{doc_id}", status_code=204, summary="Delete one of your documents"
)
async def delete_document(name: str, doc_id: str, me: CurrentUser, state: State) -> Response:
    await run_sync(state.documents.delete, me.user_id, name, doc_id)
    return Response(status_code=204)


@router.get("/jobs/{job_id}", response_model=JobOut, summary="An ingestion job's progress")
async def get_job(job_id: str, me: CurrentUser, state: State) -> JobOut:
    return JobOut.model_validate(await run_sync(state.store.get_job, me.user_id, job_id))
