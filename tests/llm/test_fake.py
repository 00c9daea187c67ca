"""ScriptedChatModel: the test double every node test relies on."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from ragchat.errors import LLMOutputError, LLMUnavailable, RagchatError
from ragchat.llm.base import ChatModel, ChatResult, GenerationOptions, Message, ToolCall, ToolSpec
from ragchat.llm.fake import ScriptedChatModel, ScriptExhausted

T = TypeVar("T")
USER = [Message(role="user", content="what is the refund policy?")]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Route(BaseModel):
    route: str


def test_satisfies_the_protocol() -> None:
    model: ChatModel = ScriptedChatModel()  # checked statically by mypy too
    assert isinstance(model, ChatModel)


def test_replies_in_order_and_records_requests() -> None:
    call = ToolCall(id="c1", name="search", arguments={"query": "refund"})
    model = ScriptedChatModel(["first"]).enqueue(ChatResult(content="", tool_calls=[call]))
    tool = ToolSpec(name="search", description="d", parameters={"type": "object"})
    opts = GenerationOptions(temperature=0.0, max_tokens=5)

    assert run(model.generate(USER, options=opts)).content == "first"
    assert run(model.generate(USER, tools=[tool])).tool_calls == [call]
    assert model.remaining == 0
    assert model.requests[0] == (USER, opts, [])
    assert model.requests[1][1] == GenerationOptions()
    assert model.requests[1][2] == [tool]


def test_exceptions_are_raised() -> None:
    model = ScriptedChatModel([LLMUnavailable("down"), "after"])
    with pytest.raises(LLMUnavailable, match="down"):
        run(model.generate(USER))
    assert run(model.generate(USER)).content == "after"


def test_stream_yields_words_that_join_to_the_reply() -> None:
    text = "Refunds are  accepted\nwithin 30 days. "
    model = ScriptedChatModel([text])

    async def collect() -> list[str]:
        return [d async for d in model.stream(USER)]

    deltas = run(collect())
    assert len(deltas) == 6
    assert "".join(deltas) == text
    assert len(model.requests) == 1


def test_structured_parses_text_and_accepts_models() -> None:
    model = ScriptedChatModel(['```json\n{"route": "kb"}\n```', Route(route="chat")])
    assert run(model.structured(USER, Route)) == Route(route="kb")
    assert run(model.structured(USER, Route)) == Route(route="chat")


def test_structured_invalid_reply_is_an_output_error() -> None:
    model = ScriptedChatModel(['{"destination": "kb"}'])
    with pytest.raises(LLMOutputError, match="route"):
        run(model.structured(USER, Route))


def test_empty_script_fails_loudly() -> None:
    model = ScriptedChatModel()
    with pytest.raises(ScriptExhausted, match="no scripted reply left") as info:
        run(model.generate(USER))
    assert isinstance(info.value, AssertionError)
    assert isinstance(info.value, RagchatError)

    async def stream_empty() -> None:
        async for _ in model.stream(USER):
            pass

    with pytest.raises(ScriptExhausted):
        run(stream_empty())
