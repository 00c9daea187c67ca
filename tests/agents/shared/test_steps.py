"""One step contract, one fallback: ``choose`` picks the heuristic without a model, else the
model falling back to the heuristic on ``LLMError`` — unless the reader already saw part of the
model's reply, or the failure is not the model's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

import pytest
from langgraph.graph import END, START, StateGraph

from ragchat.agents.shared.steps import Fallback, choose
from ragchat.agents.shared.streaming import Streamer
from ragchat.errors import LLMOutputError, LLMUnavailable
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.llm.fake import ScriptedChatModel, ScriptExhausted


@dataclass
class Echo:
    prefix: str
    calls: list[str] = field(default_factory=list)

    async def run(self, request: str) -> str:
        self.calls.append(request)
        return f"{self.prefix}:{request}"


@dataclass
class Failing:
    error: Exception

    async def run(self, request: str) -> str:
        raise self.error


def test_without_a_model_the_heuristic_runs_alone() -> None:
    heuristic = Echo("h")
    chosen = choose("agent x: step", None, lambda model: Echo("m"), heuristic)
    assert chosen is heuristic
    assert asyncio.run(chosen.run("q")) == "h:q"


def test_with_a_model_the_model_runs_and_the_heuristic_waits() -> None:
    model = ScriptedChatModel()
    built: list[ChatModel] = []

    def llm(m: ChatModel) -> Echo:
        built.append(m)
        return Echo("m")

    heuristic = Echo("h")
    chosen = choose("agent x: step", model, llm, heuristic)
    assert isinstance(chosen, Fallback) and built == [model]
    assert asyncio.run(chosen.run("q")) == "m:q" and heuristic.calls == []


@pytest.mark.parametrize("error", [LLMUnavailable("down"), LLMOutputError("bad JSON")])
def test_a_model_failure_falls_back_and_is_noted(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    step = Fallback(
        "agent x: step", Failing(error), Echo("h"), note=lambda r, e: f"{r} ({type(e).__name__})"
    )
    with caplog.at_level(logging.WARNING):
        assert asyncio.run(step.run("q")) == f"h:q ({type(error).__name__})"
    assert "agent x: step" in caplog.text and str(error) in caplog.text


@pytest.mark.parametrize("error", [RuntimeError("a bug"), ScriptExhausted("no reply left")])
def test_failures_that_are_not_the_models_propagate(error: Exception) -> None:
    step = Fallback("agent x: step", Failing(error), Echo("h"))
    with pytest.raises(type(error)):
        asyncio.run(step.run("q"))


class _BreaksMidStream(ScriptedChatModel):
    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        yield "Hello "
        raise LLMUnavailable("connection reset mid-stream")


class _HalfStreamed:
    """Streams one delta of the model's reply, then the model fails."""

    def __init__(self, stream: Streamer) -> None:
        self.stream = stream

    async def run(self, request: str) -> str:
        messages = [Message("user", request)]
        return await self.stream.reply(_BreaksMidStream(), messages, GenerationOptions())


@dataclass
class _S:
    out: str = ""


def test_no_fallback_once_the_reader_saw_part_of_the_reply() -> None:
    """Two half replies would not join to one: the model's error stands."""
    stream = Streamer()
    step = Fallback("agent x: respond", _HalfStreamed(stream), Echo("h"))
    tokens: list[str] = []

    async def node(state: _S) -> dict[str, str]:
        return {"out": await step.run("hi")}

    graph = StateGraph(_S)
    graph.add_node("n", node)
    graph.add_edge(START, "n")
    graph.add_edge("n", END)

    async def go() -> None:
        async for mode, chunk in graph.compile().astream(_S(), stream_mode=["custom", "values"]):
            if mode == "custom":
                tokens.append(chunk.text)

    with pytest.raises(LLMUnavailable, match="mid-stream"):
        asyncio.run(go())
    assert tokens == ["Hello "]
