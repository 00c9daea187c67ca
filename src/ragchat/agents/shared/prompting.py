"""Prompt helpers shared by the model implementations of the steps: an agent's prompt
overrides, and the conversation as chat messages or as quoted text."""

from __future__ import annotations

from collections.abc import Sequence

from ragchat.agents.config import AgentConfig
from ragchat.llm.base import Message
from ragchat.types import HistoryMessage


def prompt(agent: AgentConfig, key: str, default: str, **values: str) -> str:
    """The agent's override of a prompts.py template (``[agents.X.prompts]``, by key, any
    case) with ``{name}`` placeholders filled; other braces are left alone."""
    text = agent.prompts.get(key) or agent.prompts.get(key.lower()) or default
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _last(history: Sequence[HistoryMessage], n: int) -> list[HistoryMessage]:
    return list(history)[-n:] if n > 0 else []


def history_messages(history: Sequence[HistoryMessage], last: int) -> list[Message]:
    """The ``last`` earlier messages as chat messages (``AgentSettings.model_history_messages``)."""
    return [
        Message(role=m.role, content=m.content)
        for m in _last(history, last)
        if m.role in ("user", "assistant") and m.content
    ]


def history_text(history: Sequence[HistoryMessage], last: int) -> str:
    """The ``last`` earlier messages quoted as text (``prompt_history_messages``)."""
    lines = [f"{m.role}: {m.content}" for m in _last(history, last) if m.role != "system"]
    return "\n".join(lines) or "(no earlier messages)"
