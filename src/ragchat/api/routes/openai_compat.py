"""OpenAI-compatible endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions``
(streaming and not). Point any OpenAI client at ``http://host:8000/v1``."""

from __future__ import annotations

import time
from contextlib import aclosing
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from ragchat.api.deps import LimitedOpenAIUser, OpenAIUser, State
from ragchat.api.schemas import ERRORS, OpenAIChatRequest
from ragchat.api.services._sync import run_sync
from ragchat.api.services.openai import models_payload, refuse_unsupported
from ragchat.api.sse import EventStreamResponse, sse_event

router = APIRouter(prefix="/v1", tags=["openai-compatible"], responses=ERRORS)
STARTED = int(time.time())


@router.get(
    "/models",
    summary="The agents, as models ('ragchat' routes between them), and the caller's knowledge "
    "bases as 'kb/<name>'",
)
async def list_models(me: OpenAIUser, state: State) -> dict[str, Any]:
    kbs = [v.name for v in await run_sync(state.kbs.visible, me.user_id)]
    return models_payload(state.engine, STARTED, kbs)


@router.post(
    "/chat/completions",
    summary="Chat Completions (stateless: history comes from the request)",
    responses={200: {"content": {"application/json": {}, "text/event-stream": {}}}},
)
async def chat_completions(
    body: OpenAIChatRequest, me: LimitedOpenAIUser, state: State
) -> Response:
    refuse_unsupported(body.model_extra or {})
    messages = [(m.role, m.content) for m in body.messages]
    if not body.stream:
        return JSONResponse(await state.openai.complete(me.user_id, body.model, messages))
    prepared = await state.openai.prepare_stream(body.model, messages, me.user_id)
    state.streams.acquire()

    async def events() -> Any:
        async with aclosing(state.openai.stream(me.user_id, body.model, prepared)) as chunks:
            async for chunk in chunks:
                yield sse_event(None, chunk)
        yield sse_event(None, "[DONE]")

    return EventStreamResponse(events(), on_close=state.streams.release)
