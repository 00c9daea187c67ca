"""The one chat-model interface every node uses: generation, streaming, structured output and
tool calling. Backends: OpenAI-compatible HTTP, local GGUF (llama-cpp-python), scripted fake."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

# Defined below the settings (which give each node its own); the chat-model interface's name.
from ragchat.types import GenerationOptions as GenerationOptions

Role = Literal["system", "user", "assistant", "tool"]
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role="tool": which call this answers
    name: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call; ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ChatResult:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""


@runtime_checkable
class ChatModel(Protocol):
    name: str

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        """One completion; may contain tool calls when ``tools`` are offered."""
        ...

    def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncIterator[str]:
        """Text deltas as they arrive. Cancelling the iterator cancels the request."""
        ...

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        options: GenerationOptions | None = None,
    ) -> M:
        """A reply parsed into ``schema``; raises ``LLMOutputError`` when it cannot be."""
        ...


@runtime_checkable
class HoldsConnections(Protocol):
    """Optional ``ChatModel`` capability: connections to close at shutdown (on the event loop
    that opened them)."""

    async def aclose(self) -> None: ...
