"""Every outbound LLM call is bounded: a finite timeout on the HTTP client and ``max_tokens`` in
every request body, whatever the caller passed (a runaway generation costs money and holds a
stream slot)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from pydantic import BaseModel

from ragchat.llm.base import GenerationOptions, Message
from ragchat.llm.openai_compat import OpenAICompatChatModel

QUESTION = [Message(role="user", content="Hello?")]


class Verdict(BaseModel):
    ok: bool


def _reply(body: dict[str, Any]) -> httpx.Response:
    if body.get("stream"):
        chunk = {"choices": [{"delta": {"content": "hi"}, "index": 0}]}
        sse = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
        return httpx.Response(200, text=sse, headers={"Content-Type": "text/event-stream"})
    content = '{"ok": true}' if body.get("response_format") else "hi"
    message = {"role": "assistant", "content": content}
    return httpx.Response(200, json={"choices": [{"message": message, "finish_reason": "stop"}]})


def test_every_request_carries_max_tokens_and_a_finite_timeout() -> None:
    sent: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append((body, dict(request.extensions.get("timeout", {}))))
        return _reply(body)

    model = OpenAICompatChatModel(
        "http://llm.invalid/v1", None, "m", timeout=7.0, transport=httpx.MockTransport(handler)
    )

    async def every_call() -> None:
        await model.generate(QUESTION)
        await model.generate(QUESTION, options=GenerationOptions(max_tokens=33))
        async for _ in model.stream(QUESTION):
            pass
        await model.structured(QUESTION, Verdict)
        await model.aclose()

    asyncio.run(every_call())
    assert len(sent) == 4
    for body, timeout in sent:
        assert isinstance(body.get("max_tokens"), int) and 0 < body["max_tokens"] <= 4096, body
        assert timeout and all(v is not None and v <= 7.0 for v in timeout.values()), timeout
    assert sent[1][0]["max_tokens"] == 33
