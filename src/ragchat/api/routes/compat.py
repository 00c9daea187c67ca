"""The replaced systems' own paths, served beside ragchat's API (the README's "Coming from …"
sections): ``POST /api/query`` (the textbook server, 004), ``POST /conversations/{id}/query``
and ``POST /stream`` (the safety-first medical server, 003). ``POST /chat``, ``/end-session``,
``/health``, ``/query``, ``/users`` and ``/conversations`` already answer their clients."""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks

from ragchat.api.bounds import IdPath
from ragchat.api.deps import LimitedUser, State
from ragchat.api.routes.chat import SSE_DOC, answer_json, answer_stream, turn_request
from ragchat.api.schemas import ERRORS
from ragchat.api.schemas_compat import (
    QuestionAnswer,
    QuestionTurn,
    RetrievedChunk,
    TextbookAnswer,
    TextbookQuery,
)
from ragchat.api.services.compat import textbook_sources
from ragchat.api.sse import EventStreamResponse

router = APIRouter(tags=["compatibility"], responses=ERRORS)


@router.post("/api/query", response_model=TextbookAnswer, summary="Ask the textbook (004)")
async def textbook_query(body: TextbookQuery, me: LimitedUser, state: State) -> TextbookAnswer:
    """``POST /query`` under the textbook server's path and field names: 400 for a question
    under 3 characters or ``use_context_only`` without ``context``."""
    chapter = None if body.chapter_id is None else str(body.chapter_id)
    answer = await state.query.ask(
        me.user_id,
        body.question,
        context=body.context,
        use_context_only=body.use_context_only,
        top_k=body.top_k,
        chapter=chapter,
        find_kb=False,  # the textbook server answers from the book, or says it cannot
    )
    return TextbookAnswer(
        answer=answer.answer,
        sources=[RetrievedChunk(**s) for s in textbook_sources(answer, body.context)],
        query_time_ms=round(answer.query_time_ms),
        mode=answer.mode,
    )


@router.post(
    "/conversations/{conversation_id}/query",
    response_model=QuestionAnswer,
    summary="Ask within a conversation (003)",
)
async def conversation_query(
    conversation_id: IdPath,
    body: QuestionTurn,
    me: LimitedUser,
    state: State,
    background: BackgroundTasks,
) -> QuestionAnswer:
    """A turn in one of the caller's conversations (404 otherwise); ``question`` or ``query``."""
    request = turn_request(me.user_id, conversation_id, body.question, body.agent)
    reply = await answer_json(state, background, request)
    return QuestionAnswer(
        **reply.model_dump(),
        answer=reply.message,
        conversation_id=reply.session_id,
        sources=reply.citations,
    )


@router.post(
    "/stream",
    response_class=EventStreamResponse,
    responses=SSE_DOC,
    summary="Ask, streamed as Server-Sent Events (003)",
)
async def stream(body: QuestionTurn, me: LimitedUser, state: State) -> EventStreamResponse:
    """``/chat/stream`` with ``question``/``query``: in ``conversation_id`` (the caller's) when
    given, else in a new conversation named by the ``metadata`` event's ``session_id``."""
    request = turn_request(me.user_id, body.conversation_id, body.question, body.agent)
    return await answer_stream(state, request)
