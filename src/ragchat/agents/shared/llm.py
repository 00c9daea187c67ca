"""Chat-model and streaming helpers shared by the agent nodes.

Every node that produces reply text sends it through ``emit`` or ``stream_reply``, which write
``{"type": "token", "text": ...}`` events to LangGraph's custom stream: the deltas of one turn
join to exactly the reply (the engine checks nothing else)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langgraph.config import get_stream_writer

from ragchat.agents.config import AgentConfig
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.types import NO_ANSWER, HistoryMessage

_PIECES = re.compile(r"\S+\s*|\s+")
WORDS_PER_DELTA = 3
HISTORY_TURNS = 10


def prompt(agent: AgentConfig, key: str, default: str, **values: str) -> str:
    """The agent's override of a prompts.py template (``[agents.X.prompts]``, by key, any
    case) with ``{name}`` placeholders filled; other braces are left alone."""
    text = agent.prompts.get(key) or agent.prompts.get(key.lower()) or default
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def word_groups(text: str, size: int = WORDS_PER_DELTA) -> list[str]:
    pieces = _PIECES.findall(text)
    return ["".join(pieces[i : i + size]) for i in range(0, len(pieces), size)]


def emit(text: str) -> None:
    """Streams already-complete text (offline answers, canned replies) as small deltas.

    They are marked ``paced``: the engine spaces them out when streaming (see
    ``ChatEngine.stream_turn``), since deltas written in one go would reach a reader as one
    burst and the reply would appear all at once."""
    if not text:
        return
    write = get_stream_writer()
    for delta in word_groups(text):
        write({"type": "token", "text": delta, "paced": True})


def history_messages(
    history: Sequence[HistoryMessage], turns: int = HISTORY_TURNS
) -> list[Message]:
    return [
        Message(role=m.role, content=m.content)
        for m in list(history)[-turns:]
        if m.role in ("user", "assistant") and m.content
    ]


def history_text(history: Sequence[HistoryMessage], turns: int = 6) -> str:
    lines = [f"{m.role}: {m.content}" for m in list(history)[-turns:] if m.role != "system"]
    return "\n".join(lines) or "(no earlier messages)"


async def stream_reply(
    model: ChatModel, messages: Sequence[Message], options: GenerationOptions
) -> str:
    """Streams the model's deltas to the client as they arrive; returns the whole text."""
    write = get_stream_writer()
    parts: list[str] = []
    async for delta in model.stream(messages, options=options):
        if delta:
            parts.append(delta)
            write({"type": "token", "text": delta})
    return "".join(parts)


async def stream_answer(
    model: ChatModel, messages: Sequence[Message], options: GenerationOptions
) -> str | None:
    """Like ``stream_reply``, but holds the first deltas back until it is clear the model is
    not answering ``NO_ANSWER``; returns ``None`` (nothing streamed) when it is."""
    write = get_stream_writer()
    parts: list[str] = []
    held = True
    async for delta in model.stream(messages, options=options):
        if not delta:
            continue
        parts.append(delta)
        if not held:
            write({"type": "token", "text": delta})
            continue
        head = "".join(parts).lstrip()
        if len(head) >= len(NO_ANSWER) or not NO_ANSWER.startswith(head):
            if head.startswith(NO_ANSWER):
                return None
            held = False
            write({"type": "token", "text": "".join(parts)})
    text = "".join(parts)
    if held:
        if text.strip().startswith(NO_ANSWER) or not text.strip():
            return None
        write({"type": "token", "text": text})
    return text
