"""Conversations and their messages, always scoped to the caller: someone else's conversation
is a 404, exactly like a missing one."""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Query, Request, Response

from ragchat.api.bounds import MAX_CONVERSATIONS_PAGE, MAX_MESSAGES_PAGE, BeforeSeq, IdPath, Offset
from ragchat.api.deps import CurrentUser, LimitedUser, Owner, State
from ragchat.api.schemas import (
    ERRORS,
    ChatResponse,
    ConversationCreate,
    ConversationOut,
    ConversationRename,
    MessageCreate,
    MessageOut,
    kb_list,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.state import AppState
from ragchat.store.rows import ConversationRow

from .chat import SSE_DOC, answer_json, answer_stream, turn_request

router = APIRouter(prefix="/conversations", tags=["conversations"], responses=ERRORS)


@router.get("", response_model=list[ConversationOut], summary="The caller's conversations")
async def list_conversations(
    me: CurrentUser,
    state: State,
    limit: int = Query(50, ge=1, le=MAX_CONVERSATIONS_PAGE),
    offset: Offset = 0,
) -> list[ConversationOut]:
    rows = await run_sync(state.store.list_conversations, me.user_id, limit, offset)
    return await run_sync(_outs, state, me.user_id, rows)


def _outs(state: AppState, user_id: str, rows: list[ConversationRow]) -> list[ConversationOut]:
    """Each conversation with the names its knowledge bases have now (renames show)."""
    out = []
    for row in rows:
        names = state.kbs.names_by_storage(user_id, row.knowledge_bases)
        out.append(ConversationOut.model_validate(row).model_copy(update={"kb": names}))
    return out


async def _out(state: AppState, user_id: str, row: ConversationRow) -> ConversationOut:
    return (await run_sync(_outs, state, user_id, [row]))[0]


def _create(state: AppState, user_id: str, body: ConversationCreate) -> ConversationRow:
    bound = state.chat.bound(user_id, kb_list(body.kb))  # 404 before anything is stored
    row = state.store.create_conversation(user_id, body.title)
    if bound:
        row = state.store.set_knowledge_bases(user_id, row.id, [v.storage for v in bound])
    return row


@router.post("", response_model=ConversationOut, status_code=201, summary="Start a conversation")
async def create_conversation(body: ConversationCreate, me: Owner, state: State) -> ConversationOut:
    """Needs a key or a cookie (401 otherwise): a conversation nobody can reopen is waste.
    ``kb`` binds it to knowledge bases the caller may see (404 ``knowledge_base_not_visible``
    otherwise): every reply then cites only their documents."""
    return await _out(state, me.user_id, await run_sync(_create, state, me.user_id, body))


@router.get("/{conversation_id}", response_model=ConversationOut, summary="One conversation")
async def get_conversation(
    conversation_id: IdPath, me: CurrentUser, state: State
) -> ConversationOut:
    row = await run_sync(state.store.get_conversation, me.user_id, conversation_id)
    return await _out(state, me.user_id, row)


@router.patch("/{conversation_id}", response_model=ConversationOut, summary="Rename")
async def rename_conversation(
    conversation_id: IdPath, body: ConversationRename, me: CurrentUser, state: State
) -> ConversationOut:
    title = " ".join(body.title.split())
    row = await run_sync(state.store.rename, me.user_id, conversation_id, title)
    return await _out(state, me.user_id, row)


@router.post(
    "/{conversation_id}/title",
    response_model=ConversationOut,
    summary="Regenerate the title from the first exchange",
)
async def regenerate_title(
    conversation_id: IdPath, me: CurrentUser, state: State
) -> ConversationOut:
    row = await state.chat.regenerate_title(me.user_id, conversation_id)
    return await _out(state, me.user_id, row)


@router.delete("/{conversation_id}", status_code=204, summary="Delete with its messages")
async def delete_conversation(conversation_id: IdPath, me: CurrentUser, state: State) -> Response:
    await run_sync(state.store.delete_conversation, me.user_id, conversation_id)
    return Response(status_code=204)


@router.get(
    "/{conversation_id}/messages", response_model=list[MessageOut], summary="Messages, oldest first"
)
async def list_messages(
    conversation_id: IdPath,
    me: CurrentUser,
    state: State,
    limit: int = Query(100, ge=1, le=MAX_MESSAGES_PAGE),
    before_seq: BeforeSeq = None,
) -> list[MessageOut]:
    rows = await run_sync(state.store.list_messages, me.user_id, conversation_id, limit, before_seq)
    return [MessageOut.model_validate(m) for m in rows]


@router.post(
    "/{conversation_id}/messages",
    response_model=ChatResponse,
    responses=SSE_DOC,
    summary="Send a message (a turn); SSE with ?stream=true or Accept: text/event-stream",
)
async def post_message(
    conversation_id: IdPath,
    body: MessageCreate,
    request: Request,
    me: LimitedUser,
    state: State,
    background: BackgroundTasks,
    stream: bool = Query(False),
) -> ChatResponse | Response:
    kb = kb_list(body.kb)
    turn = turn_request(me.user_id, conversation_id, body.message, body.agent)
    if stream or "text/event-stream" in request.headers.get("accept", ""):
        return await answer_stream(state, turn, kb=kb)
    return await answer_json(state, background, turn, kb=kb)
