"""What a conversation turn produces, shared by every agent, the engine, the CLI and the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ragchat.errors import ConfigError, RagchatError
from ragchat.types import Citation, HistoryMessage


@dataclass
class TurnResult:
    """A finished turn. ``metadata`` carries routing (agent, reasoning, confidence), the
    reformulated query, retrieval attempts, confidence, the gate decision and per-step timings."""

    reply: str
    agent: str
    citations: list[Citation] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    bubbles: list[str] | None = None  # companion replies as several chat bubbles
    no_answer: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "reply": self.reply,
            "agent": self.agent,
            "citations": [c.to_dict() for c in self.citations],
            "metadata": self.metadata,
            "bubbles": self.bubbles,
            "no_answer": self.no_answer,
        }


class UnknownAgent(ConfigError):
    """A turn asked for an agent name the configuration does not declare."""


class InvalidMessage(RagchatError):
    """The user message is empty (or only whitespace)."""


@dataclass
class ConversationState:
    """What the caller loads before a turn. The database is the single source of truth: the
    engine never stores history; it returns the (possibly new) agent in
    ``TurnResult.metadata["assigned_agent"]`` for the caller to persist."""

    conversation_id: str
    assigned_agent: str | None = None
    history: list[HistoryMessage] = field(default_factory=list)  # recent messages, oldest first
    user_profile: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TurnOptions:
    """Per-turn overrides: ``agent`` forces an agent (the OpenAI-compatible model field),
    ``chapter`` / ``selected_text`` select textbook modes, ``kb`` searches another knowledge
    base with the agent's settings."""

    agent: str | None = None
    chapter: str | None = None
    selected_text: str | None = None
    top_k: int | None = None
    kb: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# {"type": "metadata" | "token" | "citations" | "final", ...}; see ``ChatEngine.stream_turn``.
TurnEvent = dict[str, Any]
