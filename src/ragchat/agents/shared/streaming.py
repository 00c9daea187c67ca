"""Reply text to the turn's event stream.

Every node or step that produces reply text sends it through a ``Streamer``, which writes
``TokenEvent``s to LangGraph's custom stream: the deltas of one turn join to exactly the reply.
It also counts what it wrote, so a step that fails after the reader has seen part of its reply
is not replaced by another (``steps.Fallback``): two half-replies would not join to one."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from langgraph.config import get_stream_writer

from ragchat.agents.events import TokenEvent
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.safety.leak import LEAK_NOTICE, PromptLeakGuard
from ragchat.types import NO_ANSWER

log = logging.getLogger(__name__)
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
        self,
        model: ChatModel,
        messages: Sequence[Message],
        options: GenerationOptions,
        *,
        private: str = "",
    ) -> str | None:
        """Like ``reply``, but holds the first deltas back until it is clear the model is not
        answering ``NO_ANSWER``; returns ``None`` (nothing streamed) when it is.

        ``private`` (the system prompt) must never be repeated: the last few words are held
        back, and a reply that starts repeating it is cut there and ends with a notice."""
        guard = PromptLeakGuard(private) if private else None
        parts: list[str] = []
        sent = 0
        held = True
        async for delta in model.stream(messages, options=options):
            if not delta:
                continue
            parts.append(delta)
            text = "".join(parts)
            if held:
                head = text.lstrip()
                if len(head) < len(NO_ANSWER) and NO_ANSWER.startswith(head):
                    continue
                if head.startswith(NO_ANSWER):
                    return None
                held = False
            if guard:
                leak = guard.leak_start(text, tail_words=2 * guard.size + len(delta))
                if leak is not None:
                    return self._cut(text, sent, leak)
                end = guard.safe_end(text)
            else:
                end = len(text)
            if end > sent:
                _write(text[sent:end])
                sent = end
        text = "".join(parts)
        if held and (text.strip().startswith(NO_ANSWER) or not text.strip()):
            return None
        leak = guard.leak_start(text) if guard else None
        if leak is not None:
            return self._cut(text, sent, leak)
        if len(text) > sent:
            _write(text[sent:])
        return text

    @staticmethod
    def _cut(text: str, sent: int, leak: int) -> str:
        """The reply up to where it starts repeating the private prompt, then the notice
        (nothing from ``leak`` on was sent: the last words are always held back)."""
        log.warning("a reply repeating the system prompt was cut")
        kept = text[:leak]
        notice = ("\n\n" if kept.strip() else "") + LEAK_NOTICE
        _write(kept[sent:] + notice)
        return kept + notice
