"""OpenAICompatChatModel against an in-process ``httpx.MockTransport``: no network, no waiting."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import httpx
import pytest
from pydantic import BaseModel

from ragchat.errors import LLMError, LLMOutputError, LLMUnavailable
from ragchat.llm.base import GenerationOptions, Message, ToolCall, ToolSpec
from ragchat.llm.openai_compat import OpenAICompatChatModel

T = TypeVar("T")
Handler = Callable[[httpx.Request], httpx.Response]

SYSTEM = Message(role="system", content="You are a helpful assistant for the docs.")
SEARCH = ToolSpec(
    name="search",
    description="Search the knowledge base.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
        "required": ["query"],
    },
)
CALC = ToolSpec(
    name="calculator",
    description="Evaluate arithmetic.",
    parameters={"type": "object", "properties": {"expr": {"type": "string"}}},
)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Recorder:
    """Serves scripted responses and remembers the requests."""

    def __init__(self, *responses: httpx.Response | Handler | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(item, Exception):
            raise item
        if callable(item):
            return item(request)
        return item

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def make_model(
    recorder: Recorder, sleeps: list[float] | None = None, **kwargs: Any
) -> OpenAICompatChatModel:
    async def fake_sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    kwargs.setdefault("max_retries", 3)
    return OpenAICompatChatModel(
        "http://llm.test/v1/",
        kwargs.pop("api_key", "sk-test"),
        "test-model",
        transport=httpx.MockTransport(recorder),
        sleep=fake_sleep,
        rng=random.Random(0),
        **kwargs,
    )


def completion(
    content: str | None = "hello", tool_calls: list[dict[str, Any]] | None = None
) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return httpx.Response(
        200,
        json={
            "id": "x",
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        },
    )


def fn_call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- request shape ------------------------------------------------------------------------


def test_request_shape_system_and_tools_first() -> None:
    rec = Recorder(completion())
    model = make_model(rec)
    result = run(
        model.generate(
            [SYSTEM, Message(role="user", content="hi")],
            options=GenerationOptions(temperature=0.0, max_tokens=64, stop=("\n\n",)),
            tools=[SEARCH, CALC],
        )
    )
    assert result.content == "hello"
    assert result.usage["total_tokens"] == 12
    request = rec.requests[0]
    assert str(request.url) == "http://llm.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = json.loads(request.content)
    assert list(body)[:4] == ["model", "tools", "tool_choice", "messages"]
    assert body["messages"][0] == {"role": "system", "content": SYSTEM.content}
    assert [t["function"]["name"] for t in body["tools"]] == ["calculator", "search"]
    assert body["tools"][1]["type"] == "function"
    assert body["tool_choice"] == "auto"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 64
    assert body["stop"] == ["\n\n"] and body["stream"] is False


def test_no_api_key_means_no_auth_header() -> None:
    rec = Recorder(completion())
    run(make_model(rec, api_key=None).generate([Message(role="user", content="hi")]))
    assert "authorization" not in rec.requests[0].headers


def test_prompt_cache_prefix_is_byte_identical() -> None:
    """Different user turns (and tool order) must not change the static prefix."""
    rec = Recorder(completion())
    model = make_model(rec)
    run(
        model.generate(
            [SYSTEM, Message(role="user", content="first question")], tools=[SEARCH, CALC]
        )
    )
    run(
        model.generate(
            [SYSTEM, Message(role="user", content="a different, longer question")],
            options=GenerationOptions(temperature=0.7, max_tokens=9),
            tools=[CALC, SEARCH],
        )
    )
    first, second = (r.content for r in rec.requests)
    split = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    prefix = first[:split]
    tools_json = json.dumps(json.loads(first)["tools"], sort_keys=True, separators=(",", ":"))
    system_json = json.dumps(
        json.loads(first)["messages"][0], sort_keys=True, separators=(",", ":")
    )
    assert tools_json.encode() in prefix
    assert system_json.encode() in prefix
    assert prefix.endswith(b'{"content":"')  # diverges exactly at the user turn's text


def test_leading_system_messages_merge_into_one() -> None:
    rec = Recorder(completion())
    messages = [
        SYSTEM,
        Message(role="system", content="Cite sources."),
        Message(role="user", content="q"),
    ]
    run(make_model(rec).generate(messages))
    sent = rec.bodies()[0]["messages"]
    assert sent[0] == {"role": "system", "content": f"{SYSTEM.content}\n\nCite sources."}
    assert [m["role"] for m in sent] == ["system", "user"]


def test_tool_turns_are_sent_in_openai_format() -> None:
    rec = Recorder(completion())
    call = ToolCall(id="call_9", name="search", arguments={"query": "x"})
    messages = [
        SYSTEM,
        Message(role="user", content="q"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="results", tool_call_id="call_9", name="search"),
    ]
    run(make_model(rec).generate(messages, tools=[SEARCH]))
    sent = rec.bodies()[0]["messages"]
    assert sent[2]["tool_calls"][0] == fn_call("search", '{"query":"x"}', "call_9")
    assert sent[2]["content"] is None
    assert sent[3] == {
        "role": "tool",
        "content": "results",
        "tool_call_id": "call_9",
        "name": "search",
    }


# --- tool calls ---------------------------------------------------------------------------


def test_tool_call_parsing() -> None:
    rec = Recorder(completion(None, [fn_call("search", '{"query": "refunds", "k": 3}')]))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert result.tool_calls == [ToolCall("call_1", "search", {"query": "refunds", "k": 3})]
    assert result.content == "" and result.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("failed_generation", "expected"),
    [
        ('{"name": "search", "arguments": {"query": "refunds"}}', {"query": "refunds"}),
        ('<function=search>{"query": "refunds"}</function>', {"query": "refunds"}),
        ('<function=search{"query": "refunds"}</function>', {"query": "refunds"}),
        ('[{"name": "search", "parameters": {"query": "refunds"}}]', {"query": "refunds"}),
    ],
)
def test_tool_use_failed_is_recovered(failed_generation: str, expected: dict[str, Any]) -> None:
    error = {
        "error": {
            "message": "Failed to call a function. Please adjust your prompt.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": failed_generation,
        }
    }
    rec = Recorder(httpx.Response(400, json=error))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert len(result.tool_calls) == 1
    assert result.tool_calls[0].name == "search"
    assert result.tool_calls[0].arguments == expected
    assert len(rec.requests) == 1  # a 400 is not retried


def test_unparsable_tool_use_failed_becomes_plain_answer() -> None:
    error = {
        "error": {
            "code": "tool_use_failed",
            "message": "Failed to call a function.",
            "failed_generation": "I think the answer is 42.",
        }
    }
    rec = Recorder(httpx.Response(400, json=error))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert result.tool_calls == []
    assert result.content == "I think the answer is 42."


def test_unknown_tool_is_dropped_for_plain_content() -> None:
    rec = Recorder(completion("Here is what I know.", [fn_call("browse_web", '{"url": "x"}')]))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert result.tool_calls == []
    assert result.content == "Here is what I know."
    assert result.finish_reason == "stop"


def test_tool_name_spelling_is_repaired() -> None:
    rec = Recorder(completion(None, [fn_call("functions.Search", '{"query": "a"}')]))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert [c.name for c in result.tool_calls] == ["search"]


@pytest.mark.parametrize(
    "arguments",
    ["{'query': 'refunds'}", '{"query": "refunds",}', "{'query': 'refunds', }"],
)
def test_bad_json_arguments_are_repaired(arguments: str) -> None:
    rec = Recorder(completion(None, [fn_call("search", arguments)]))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert result.tool_calls[0].arguments == {"query": "refunds"}


def test_irreparable_arguments_drop_the_call() -> None:
    rec = Recorder(completion("Plain answer.", [fn_call("search", "query=refunds")]))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert result.tool_calls == [] and result.content == "Plain answer."


def test_tool_call_printed_in_content_is_recovered() -> None:
    rec = Recorder(completion('```json\n{"name": "search", "arguments": {"query": "a"}}\n```'))
    result = run(make_model(rec).generate([Message(role="user", content="q")], tools=[SEARCH]))
    assert [c.name for c in result.tool_calls] == ["search"] and result.content == ""


# --- retries and errors -------------------------------------------------------------------


def test_retries_429_with_retry_after_then_503_then_success() -> None:
    sleeps: list[float] = []
    rec = Recorder(
        httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow"}}),
        httpx.Response(503, text="upstream busy"),
        completion("finally"),
    )
    result = run(make_model(rec, sleeps).generate([Message(role="user", content="q")]))
    assert result.content == "finally"
    assert len(rec.requests) == 3
    assert sleeps[0] == 7.0  # Retry-After honoured
    assert 0.5 <= sleeps[1] <= 1.0  # backoff 0.5 * 2**1, equal jitter
    assert rec.requests[0].content == rec.requests[2].content


def test_backoff_grows_exponentially_and_gives_up() -> None:
    sleeps: list[float] = []
    rec = Recorder(httpx.Response(500, json={"error": {"message": "boom"}}))
    with pytest.raises(LLMUnavailable, match=r"4 attempts.*boom"):
        run(make_model(rec, sleeps, max_retries=3).generate([Message(role="user", content="q")]))
    assert len(rec.requests) == 4
    assert len(sleeps) == 3
    for attempt, delay in enumerate(sleeps):
        base = 0.5 * 2**attempt
        assert base / 2 <= delay <= base


def test_connection_errors_are_retried() -> None:
    rec = Recorder(httpx.ConnectError("refused"), completion("ok"))
    result = run(make_model(rec, []).generate([Message(role="user", content="q")]))
    assert result.content == "ok" and len(rec.requests) == 2


def test_connection_errors_exhaust_retries() -> None:
    rec = Recorder(httpx.ConnectError("refused"))
    with pytest.raises(LLMUnavailable, match="ConnectError"):
        run(make_model(rec, [], max_retries=1).generate([Message(role="user", content="q")]))
    assert len(rec.requests) == 2


def test_timeout_raises_unavailable_without_retry() -> None:
    rec = Recorder(httpx.ReadTimeout("too slow"))
    with pytest.raises(LLMUnavailable, match="timed out"):
        run(make_model(rec, []).generate([Message(role="user", content="q")]))
    assert len(rec.requests) == 1


def test_401_is_an_llm_error_with_the_provider_message() -> None:
    body = {"error": {"message": "Invalid API key provided", "code": "invalid_api_key"}}
    rec = Recorder(httpx.Response(401, json=body))
    with pytest.raises(LLMError, match=r"401.*Invalid API key provided") as info:
        run(make_model(rec, []).generate([Message(role="user", content="q")]))
    assert not isinstance(info.value, LLMUnavailable)
    assert len(rec.requests) == 1


def test_error_with_http_200_is_reported() -> None:
    rec = Recorder(httpx.Response(200, json={"error": {"message": "No endpoints found"}}))
    with pytest.raises(LLMError, match="No endpoints found"):
        run(make_model(rec).generate([Message(role="user", content="q")]))


# --- streaming ----------------------------------------------------------------------------


class ChunkedStream(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.closed = False
        self.sent = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


def sse_event(text: str) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}) + "\n\n"


def test_stream_parses_sse_split_mid_line() -> None:
    raw = (
        ": OPENROUTER PROCESSING\n\n"
        + 'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
        + sse_event("Hel")
        + sse_event("lo, ")
        + sse_event("wörld")
        + "data: [DONE]\n\n"
        + sse_event("never")
    ).encode()
    chunks = [raw[i : i + 7] for i in range(0, len(raw), 7)]  # splits lines and UTF-8 chars
    stream = ChunkedStream(chunks)
    rec = Recorder(
        httpx.Response(200, stream=stream, headers={"content-type": "text/event-stream"})
    )
    model = make_model(rec)

    async def collect() -> list[str]:
        return [d async for d in model.stream([Message(role="user", content="q")])]

    assert run(collect()) == ["Hel", "lo, ", "wörld"]
    assert json.loads(rec.requests[0].content)["stream"] is True
    assert stream.closed


def test_closing_the_stream_closes_the_response() -> None:
    stream = ChunkedStream([sse_event(f"w{i} ").encode() for i in range(50)])
    rec = Recorder(httpx.Response(200, stream=stream))
    model = make_model(rec)

    async def take_one() -> str:
        gen = model.stream([Message(role="user", content="q")])
        first = await gen.__anext__()
        await gen.aclose()  # what an ASGI server does when the client disconnects
        return first

    assert run(take_one()) == "w0 "
    assert stream.closed
    assert stream.sent < 50


def test_stream_retries_before_first_byte_and_reports_errors() -> None:
    rec = Recorder(
        httpx.Response(503, text="busy"),
        httpx.Response(200, stream=ChunkedStream([sse_event("ok").encode(), b"data: [DONE]\n\n"])),
    )
    model = make_model(rec, [])

    async def collect() -> list[str]:
        return [d async for d in model.stream([Message(role="user", content="q")])]

    assert run(collect()) == ["ok"]

    bad = Recorder(httpx.Response(404, json={"error": {"message": "model not found"}}))
    with pytest.raises(LLMError, match="model not found"):
        run(_drain(make_model(bad).stream([Message(role="user", content="q")])))

    mid = Recorder(httpx.Response(200, text='data: {"error": {"message": "overloaded"}}\n\n'))
    with pytest.raises(LLMError, match="overloaded"):
        run(_drain(make_model(mid).stream([Message(role="user", content="q")])))


async def _drain(gen: AsyncIterator[str]) -> list[str]:
    return [d async for d in gen]


# --- structured output --------------------------------------------------------------------


class Verdict(BaseModel):
    route: str
    confidence: float


def test_structured_strips_fences_and_prose() -> None:
    reply = 'Sure! Here it is:\n```json\n{"route": "kb", "confidence": 0.9}\n```\nAnything else?'
    rec = Recorder(completion(reply))
    verdict = run(make_model(rec).structured([SYSTEM, Message(role="user", content="q")], Verdict))
    assert verdict == Verdict(route="kb", confidence=0.9)
    body = rec.bodies()[0]
    assert body["response_format"] == {"type": "json_object"}
    system = body["messages"][0]["content"]
    assert system.startswith(SYSTEM.content) and '"confidence"' in system


def test_structured_retries_once_with_the_validation_error() -> None:
    rec = Recorder(
        completion('{"route": "kb", "confidence": "very"}'),
        completion('{"route": "kb", "confidence": 0.5,}'),  # trailing comma is repaired
    )
    verdict = run(make_model(rec).structured([Message(role="user", content="q")], Verdict))
    assert verdict.confidence == 0.5
    retry = rec.bodies()[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"route": "kb", "confidence": "very"}'}
    assert retry[-1]["role"] == "user" and "confidence" in retry[-1]["content"]


def test_structured_raises_output_error_after_retry() -> None:
    rec = Recorder(completion("I cannot do JSON."))
    with pytest.raises(LLMOutputError, match="Verdict"):
        run(make_model(rec).structured([Message(role="user", content="q")], Verdict))
    assert len(rec.requests) == 2


def test_structured_without_json_mode_and_with_schema() -> None:
    rec = Recorder(completion('{"route": "web", "confidence": 1}'))
    run(make_model(rec, json_mode=False).structured([Message(role="user", content="q")], Verdict))
    assert "response_format" not in rec.bodies()[0]

    rec2 = Recorder(completion('{"route": "web", "confidence": 1}'))
    run(make_model(rec2, json_schema=True).structured([Message(role="user", content="q")], Verdict))
    fmt = rec2.bodies()[0]["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["title"] == "Verdict"


def test_structured_falls_back_when_response_format_is_rejected() -> None:
    rec = Recorder(
        httpx.Response(400, json={"error": {"message": "response_format is not supported"}}),
        completion('{"route": "kb", "confidence": 0.1}'),
    )
    model = make_model(rec)
    assert run(model.structured([Message(role="user", content="q")], Verdict)).route == "kb"
    bodies = rec.bodies()
    assert "response_format" in bodies[0] and "response_format" not in bodies[1]
    assert model.json_mode is False


def test_structured_keeps_json_mode_when_the_fallback_also_fails() -> None:
    rec = Recorder(httpx.Response(400, json={"error": {"message": "context too long"}}))
    model = make_model(rec)
    with pytest.raises(LLMError, match="context too long"):
        run(model.structured([Message(role="user", content="q")], Verdict))
    assert model.json_mode is True and len(rec.requests) == 2
