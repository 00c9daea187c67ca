"""A scripted ``ChatModel`` for tests: deterministic replies, every request recorded.

Shipped in the package (not under tests/) so every part of ragchat – and users' own tests –
can drive the graph without a model."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncGenerator, Iterable, Sequence

from pydantic import BaseModel

from ragchat.errors import LLMOutputError, RagchatError
from ragchat.llm.base import ChatResult, GenerationOptions, M, Message, ToolSpec
from ragchat.llm.parsing import describe_error, parse_structured

Reply = str | ChatResult | BaseModel | Exception
Request = tuple[list[Message], GenerationOptions, list[ToolSpec]]

_WORDS = re.compile(r"\s*\S+\s*|\s+")


class ScriptExhausted(RagchatError, AssertionError):
    """The code under test asked the scripted model for more replies than were scripted.

    Also an ``AssertionError`` so it reads as a test failure, never as a model error
    (it is deliberately not an ``LLMError``, so fallbacks cannot swallow it)."""


class ScriptedChatModel:
    """Replies come from a queue: ``str`` → text, ``ChatResult`` → as is (tool calls),
    ``BaseModel`` → its JSON, ``Exception`` → raised. ``structured`` does not retry: one
    reply per call, invalid → ``LLMOutputError``."""

    def __init__(self, replies: Iterable[Reply] = (), *, name: str = "scripted") -> None:
        self.name = name
        self._replies: deque[Reply] = deque(replies)
        self.requests: list[Request] = []

    def enqueue(self, *replies: Reply) -> ScriptedChatModel:
        self._replies.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def _next(
        self,
        kind: str,
        messages: Sequence[Message],
        options: GenerationOptions | None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult | BaseModel:
        self.requests.append((list(messages), options or GenerationOptions(), list(tools)))
        if not self._replies:
            last = messages[-1].content[:80] if messages else ""
            raise ScriptExhausted(
                f"ScriptedChatModel {self.name!r}: no scripted reply left for {kind} "
                f"call #{len(self.requests)} (last message: {last!r}); enqueue more replies"
            )
        reply = self._replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            return ChatResult(content=reply, model=self.name)
        return reply

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        reply = self._next("generate", messages, options, tools)
        if isinstance(reply, BaseModel):
            return ChatResult(content=reply.model_dump_json(), model=self.name)
        return reply

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        """The next reply word by word; the deltas join back to the exact text."""
        reply = self._next("stream", messages, options)
        text = reply.model_dump_json() if isinstance(reply, BaseModel) else reply.content
        for word in _WORDS.findall(text):
            yield word

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        options: GenerationOptions | None = None,
    ) -> M:
        reply = self._next("structured", messages, options)
        if isinstance(reply, schema):
            return reply
        text = reply.model_dump_json() if isinstance(reply, BaseModel) else reply.content
        try:
            return parse_structured(text, schema)
        except ValueError as exc:
            raise LLMOutputError(
                f"scripted reply is not a valid {schema.__name__}: {describe_error(exc)}"
            ) from exc
