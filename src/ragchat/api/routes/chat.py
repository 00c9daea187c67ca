"""Chat turns: ``POST /chat`` (JSON), ``POST /chat/stream`` (SSE) and ``POST /end-session``.
``session_id`` is a conversation id: omit it to start one, or name one (a client-chosen id
starts that conversation on first use; see ``services.sessions.open_session``). The JSON
reply is also what the replaced systems' clients read: ``message`` and ``agent``, the reply
as ``messages`` (bubbles) and ``metadata.sources``."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, BackgroundTasks, status
from starlette.background import BackgroundTask

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions
from ragchat.api.deps import CurrentUser, LimitedUser, State
from ragchat.api.schemas import (
    ERRORS,
    ChatRequest,
    ChatResponse,
    EndSessionRequest,
    EndSessionResponse,
    kb_list,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.chat import TurnOutcome
from ragchat.api.sse import EventStreamResponse, sse_event
from ragchat.api.state import AppState

router = APIRouter(tags=["chat"], responses=ERRORS)

ERROR_SCHEMA = {"$ref": "#/components/schemas/ErrorResponse"}
# One event of the stream (OpenAPI 3.2 style: each event described as its fields).
SSE_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "event": {"enum": ["metadata", "token", "citations", "final", "error"]},
        "data": {"type": "string", "description": "JSON"},
    },
    "required": ["event", "data"],
}
SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: `metadata` (agent, routing) → `token` ({text})… → "
        "`citations` → `final` (reply, message_id, timings); `error` on failure.",
        "content": {"text/event-stream": {"schema": SSE_EVENT_SCHEMA}},
    },
    # Refusals happen before the stream starts, as the JSON error every other route answers.
    **{
        code: {"content": {"application/json": {"schema": ERROR_SCHEMA}}} for code in (*ERRORS, 422)
    },
}


def chat_response(outcome: TurnOutcome, session_id: str, agent: str) -> ChatResponse:
    result = outcome.result
    sources = [
        {"name": c.get("title") or c.get("source"), "content": c.get("preview")}
        for c in outcome.citations
    ]
    return ChatResponse(
        session_id=session_id,
        message_id=outcome.message.id,
        message=result.reply,
        agent=agent,
        citations=outcome.citations,
        no_answer=result.no_answer,
        bubbles=result.bubbles,
        messages=list(result.bubbles or ([result.reply] if result.reply else [])),
        metadata={"sources": sources, **outcome.message.metadata},
    )


def turn_request(
    user_id: str, conversation_id: str | None, message: str, agent: str | None
) -> TurnRequest:
    """A turn as a client asks it: the conversation by id (none: start one), the clients'
    agent name."""
    return TurnRequest(
        message=message,
        user_id=user_id,
        conversation=ConversationState(conversation_id or ""),
        options=TurnOptions(agent=agent),
    )


async def answer_json(
    state: AppState,
    background: BackgroundTasks,
    request: TurnRequest,
    *,
    by_session_id: bool = False,
    anonymous: bool = False,
    kb: list[str] | None = None,
) -> ChatResponse:
    turn = await state.chat.prepare(
        request, by_session_id=by_session_id, anonymous=anonymous, kb=kb
    )
    outcome = await state.chat.run(turn)
    background.add_task(state.chat.auto_title, turn, outcome.result.reply)
    return chat_response(outcome, turn.session_id, state.chat.names.public(outcome.result.agent))


async def answer_stream(
    state: AppState,
    request: TurnRequest,
    *,
    by_session_id: bool = False,
    anonymous: bool = False,
    kb: list[str] | None = None,
) -> EventStreamResponse:
    """Takes a stream slot first (503 when full), so a refused stream stores nothing."""
    state.streams.acquire()
    try:
        turn = await state.chat.prepare(
            request, by_session_id=by_session_id, anonymous=anonymous, kb=kb
        )
    except BaseException:
        state.streams.release()
        raise
    reply: list[str] = []

    async def events() -> Any:
        # aclosing: closing this wrapper early must close the turn's stream too.
        async with aclosing(state.chat.stream(turn)) as turn_events:
            async for name, data in turn_events:
                if name == "final":
                    reply.append(str(data.get("reply", "")))
                yield sse_event(name, data)

    async def title() -> None:
        if reply:
            await state.chat.auto_title(turn, reply[0])

    return EventStreamResponse(
        events(), on_close=state.streams.release, background=BackgroundTask(title)
    )


@router.post("/chat", response_model=ChatResponse, summary="One chat turn")
async def chat(
    body: ChatRequest, me: LimitedUser, state: State, background: BackgroundTasks
) -> ChatResponse:
    """Creates the conversation when ``session_id`` is omitted or new (a caller without a
    key or cookie starts an anonymous session, which continues by its id alone); any other
    conversation opens for its owner only. The agent chosen on the
    first message stays assigned (session-sticky) unless the topic clearly changes. ``kb``
    binds the conversation to knowledge bases: replies then cite only their documents."""
    return await answer_json(
        state,
        background,
        turn_request(me.user_id, body.session_id, body.message, body.agent),
        by_session_id=True,
        anonymous=me.via == "new",
        kb=kb_list(body.kb),
    )


@router.post(
    "/chat/stream",
    response_class=EventStreamResponse,
    responses=SSE_DOC,
    summary="One chat turn, streamed as Server-Sent Events",
)
async def chat_stream(body: ChatRequest, me: LimitedUser, state: State) -> EventStreamResponse:
    return await answer_stream(
        state,
        turn_request(me.user_id, body.session_id, body.message, body.agent),
        by_session_id=True,
        anonymous=me.via == "new",
        kb=kb_list(body.kb),
    )


@router.post(
    "/end-session",
    response_model=EndSessionResponse,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Close a conversation and remember it",
)
async def end_session(
    body: EndSessionRequest, me: CurrentUser, state: State, background: BackgroundTasks
) -> EndSessionResponse:
    """Closes the conversation; its user messages are then indexed into the user's long-term
    memory in the background (what the companion's memory tool searches)."""
    conv = await run_sync(state.sessions.end, me.user_id, body.session_id)
    background.add_task(run_sync, state.sessions.index_conversation, conv.user_id, conv.id)
    return EndSessionResponse(session_id=body.session_id, status=conv.status)
