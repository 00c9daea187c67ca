from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.shared.prompting import history_messages, history_text, prompt
from ragchat.agents.shared.streaming import Streamer, tokens_written, word_groups
from ragchat.llm.base import GenerationOptions, Message
from ragchat.llm.fake import ScriptedChatModel
from ragchat.types import HistoryMessage


@dataclass
class _S:
    out: Any = None
    tokens: list[str] = field(default_factory=list)


def _collect(fn: Callable[[], Awaitable[Any]]) -> tuple[Any, list[str]]:
    """Runs ``fn`` as a graph node and returns its result and the token events it wrote."""

    async def node(state: _S) -> dict[str, Any]:
        return {"out": await fn()}

    graph = StateGraph(_S)
    graph.add_node("n", node)
    graph.add_edge(START, "n")
    graph.add_edge("n", END)

    async def go() -> tuple[Any, list[str]]:
        tokens: list[str] = []
        out: Any = None
        chunk: Any
        async for mode, chunk in graph.compile().astream(_S(), stream_mode=["custom", "values"]):
            if mode == "custom":
                tokens.append(chunk.text)
            else:
                out = chunk["out"]
        return out, tokens

    return asyncio.run(go())


def test_word_groups_join_back_to_the_exact_text() -> None:
    text = "  Hello there,\n\nthis is  a [1] test.\n"
    groups = word_groups(text, size=2)
    assert "".join(groups) == text
    assert len(groups) > 2


def test_prompt_overrides_and_placeholders() -> None:
    agent = AgentConfig(kind="support", description="d", prompts={"system": "Hi {name} {x}"})
    assert prompt(agent, "SYSTEM", "default", name="Robin") == "Hi Robin {x}"
    assert prompt(agent, "OTHER", 'JSON: {"a": 1} {name}', name="R") == 'JSON: {"a": 1} R'


def test_stream_answer_streams_text_and_swallows_no_answer() -> None:
    opts = GenerationOptions()
    msgs = [Message("user", "q")]
    model = ScriptedChatModel(["The SA node sets the pace [1].", "NO_ANSWER", "NO"])
    out, tokens = _collect(lambda: Streamer().answer(model, msgs, opts))
    assert out == "The SA node sets the pace [1]." == "".join(tokens)
    out, tokens = _collect(lambda: Streamer().answer(model, msgs, opts))
    assert out is None and tokens == []
    out, tokens = _collect(lambda: Streamer().answer(model, msgs, opts))  # a prefix, then the end
    assert out == "NO" == "".join(tokens)


def test_whole_replies_are_paced_word_groups_and_counted() -> None:
    async def whole() -> int:
        before = tokens_written()
        Streamer(words_per_delta=2).whole("one two three four five")
        return tokens_written() - before

    written, tokens = _collect(whole)
    assert tokens == ["one two ", "three four ", "five"] and written == 3


def test_history_is_cut_to_the_configured_number_of_messages() -> None:
    history = [
        HistoryMessage("user", "q1"),
        HistoryMessage("assistant", "a1"),
        HistoryMessage("system", "note"),
        HistoryMessage("user", "q2"),
    ]
    assert [m.content for m in history_messages(history, 3)] == ["a1", "q2"]
    assert history_messages(history, 0) == []
    assert history_text(history, 2) == "user: q2"
    assert history_text(history, 0) == "(no earlier messages)"
