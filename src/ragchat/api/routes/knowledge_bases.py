"""Knowledge bases as things a user owns: create, list (with what is in them), rename,
share, delete. Who may see which is ``services/knowledge_bases.py``'s rule; a knowledge base
the caller may not see is a 404 like a missing one."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ragchat.api.bounds import KbNamePath
from ragchat.api.deps import CurrentUser, State
from ragchat.api.schemas import (
    ERRORS,
    KnowledgeBaseCreate,
    KnowledgeBaseDetail,
    KnowledgeBaseOut,
    KnowledgeBaseUpdate,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.knowledge_bases import KnowledgeBaseView
from ragchat.api.state import AppState
from ragchat.errors import KnowledgeBaseNotFound

from .documents import document_outs

router = APIRouter(tags=["knowledge bases"], responses={**ERRORS, 403: ERRORS[404]})


def _out(state: AppState, user_id: str, view: KnowledgeBaseView) -> KnowledgeBaseOut:
    try:
        docs, chunks = state.documents.counts(user_id, [view.storage])[view.storage]
    except KnowledgeBaseNotFound:  # created, nothing uploaded yet
        docs, chunks = 0, 0
    return KnowledgeBaseOut(
        name=view.name,
        documents=docs,
        chunks=chunks,
        configured=view.configured,
        description=view.description,
        owned=view.owned,
        shared=view.shared,
        default_agent=view.default_agent,
        created_at=view.created_at,
    )


def _listing(state: AppState, user_id: str) -> list[KnowledgeBaseOut]:
    report = state.health.knowledge_bases()[0]
    broken = {name for name, info in report.items() if info["status"] != "ok"}
    out = []
    for view in state.kbs.visible(user_id):
        if view.storage in broken:
            continue
        try:
            out.append(_out(state, user_id, view))
        except Exception:  # a knowledge base that cannot be read now is left out
            continue
    return out


def _detail(state: AppState, user_id: str, view: KnowledgeBaseView) -> KnowledgeBaseDetail:
    base = _out(state, user_id, view)
    files = document_outs(state, user_id, view.storage)
    return KnowledgeBaseDetail(**base.model_dump(), files=files)


@router.get("/kb", response_model=list[KnowledgeBaseOut], summary="Knowledge bases you may see")
async def list_kbs(me: CurrentUser, state: State) -> list[KnowledgeBaseOut]:
    """Yours (private until you share them), shared ones, and the samples; counts include
    only documents you may see."""
    return await run_sync(_listing, state, me.user_id)


@router.post(
    "/kb", response_model=KnowledgeBaseDetail, status_code=201, summary="Create a knowledge base"
)
async def create_kb(
    body: KnowledgeBaseCreate, me: CurrentUser, state: State
) -> KnowledgeBaseDetail:
    """Private to you until you share it (``PATCH`` ``shared``). Its description helps pick
    the agent that answers over it; upload files with ``POST /kb/{name}/documents``."""
    view = await run_sync(
        state.kbs.create,
        me.user_id,
        body.name,
        description=body.description,
        default_agent=body.default_agent,
    )
    return await run_sync(_detail, state, me.user_id, view)


@router.get("/kb/{name}", response_model=KnowledgeBaseDetail, summary="One knowledge base")
async def get_kb(name: KbNamePath, me: CurrentUser, state: State) -> KnowledgeBaseDetail:
    view = await run_sync(state.kbs.resolve, me.user_id, name)
    return await run_sync(_detail, state, me.user_id, view)


@router.patch(
    "/kb/{name}",
    response_model=KnowledgeBaseDetail,
    summary="Rename, describe, share or unshare your knowledge base",
)
async def update_kb(
    name: KbNamePath, body: KnowledgeBaseUpdate, me: CurrentUser, state: State
) -> KnowledgeBaseDetail:
    """Only its owner may; conversations bound to it follow a rename. ``default_agent`` ""
    goes back to the router's choice."""
    view = await run_sync(
        lambda: state.kbs.update(
            me.user_id,
            name,
            new_name=body.name,
            description=body.description,
            default_agent=body.default_agent or None,
            clear_default_agent=body.default_agent == "",
            shared=body.shared,
        )
    )
    return await run_sync(_detail, state, me.user_id, view)


@router.delete("/kb/{name}", status_code=204, summary="Delete your knowledge base and its files")
async def delete_kb(name: KbNamePath, me: CurrentUser, state: State) -> Response:
    await run_sync(state.kbs.delete, me.user_id, name)
    return Response(status_code=204)
