"""Reply text to the turn's event stream.

Every node or step that produces reply text sends it through a ``Streamer``, which writes
``TokenEvent``s to LangGraph's custom stream: the deltas of one turn join to exactly the reply.
It also counts what it wrote, so a step that fails after the reader has seen part of its reply
is not replaced by another (``steps.Fallback``): two half-replies would not join to one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from langgraph.config import get_stream_writer

from ragchat.agents.events import TokenEvent
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.types import NO_ANSWER

_PIECES = re.compile(r"\S+\s*|\s+")
_WRITTEN: ContextVar[int] = ContextVar("ragchat_tokens_written", default=0)


def word_groups(text: str, size: int) -> list[str]:
    pieces = _PIECES.findall(text)
    return ["".join(pieces[i : i + size]) for i in range(0, len(pieces), size)]


def tokens_written() -> int:
    """How many token events this task has written (compare before and after a step)."""
    return _WRITTEN.get()


def _write(text: str, *, paced: bool = False) -> None:
    get_stream_writer()(TokenEvent(text, paced))
    _WRITTEN.set(_WRITTEN.get() + 1)


@dataclass(frozen=True)
class Streamer:
    words_per_delta: int = 3

    def whole(self, text: str) -> None:
        """Streams already-complete text (heuristic answers, canned replies) as small paced
        deltas (see ``TokenEvent.paced``)."""
        for delta in word_groups(text, self.words_per_delta) if text else ():
            _write(delta, paced=True)

    async def reply(
        self, model: ChatModel, messages: Sequence[Message], options: GenerationOptions
    ) -> str:
        """Streams the model's deltas as they arrive; returns the whole text."""
        parts: list[str] = []
        async for delta in model.stream(messages, options=options):
            if delta:
                parts.append(delta)
                _write(delta)
        return "".join(parts)

    async def answer(
        self, model: ChatModel, messages: Sequence[Message], options: GenerationOptions
    ) -> str | None:
        """Like ``reply``, but holds the first deltas back until it is clear the model is not
        answering ``NO_ANSWER``; returns ``None`` (nothing streamed) when it is."""
        parts: list[str] = []
        held = True
        async for delta in model.stream(messages, options=options):
            if not delta:
                continue
            parts.append(delta)
            if not held:
                _write(delta)
                continue
            head = "".join(parts).lstrip()
            if len(head) >= len(NO_ANSWER) or not NO_ANSWER.startswith(head):
                if head.startswith(NO_ANSWER):
                    return None
                held = False
                _write("".join(parts))
        text = "".join(parts)
        if held:
            if text.strip().startswith(NO_ANSWER) or not text.strip():
                return None
            _write(text)
        return text
