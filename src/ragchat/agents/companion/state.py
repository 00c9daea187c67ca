from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragchat.agents.shared.state import AgentState
from ragchat.llm.base import Message


@dataclass
class CompanionState(AgentState):
    memories: list[str] = field(default_factory=list)
    self_facts: list[str] = field(default_factory=list)
    transcript: list[Message] = field(default_factory=list)  # model path: the tool rounds
    draft: str | None = None  # the model's final text, when it stopped calling tools
    tool_log: list[dict[str, Any]] = field(default_factory=list)
