from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragchat.agents.metadata import AgentTrace
from ragchat.agents.shared.state import AgentState
from ragchat.llm.base import Message


@dataclass(frozen=True)
class ToolUse:
    tool: str
    arguments: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments}


@dataclass(frozen=True)
class Gathered:
    """What the companion looked up before replying: memories and its own facts; with a
    model, the tool-calling transcript, the tools used and the model's draft reply (None when
    it was still calling tools when the rounds ran out)."""

    memories: tuple[str, ...] = ()
    self_facts: tuple[str, ...] = ()
    transcript: tuple[Message, ...] = ()
    tool_log: tuple[ToolUse, ...] = ()
    draft: str | None = None


@dataclass(frozen=True)
class CompanionTrace:
    persona: str
    memories: tuple[str, ...]
    self_facts: tuple[str, ...]
    tool_calls: tuple[ToolUse, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "persona": self.persona,
            "memories": list(self.memories),
            "self_facts": list(self.self_facts),
            "tool_calls": [t.to_json() for t in self.tool_calls],
        }


@dataclass
class CompanionState(AgentState):
    gathered: Gathered = field(default_factory=Gathered)
    persona: str = ""  # the persona's name, once the reply is written

    def trace(self) -> AgentTrace | None:
        if not self.persona:
            return None
        g = self.gathered
        return CompanionTrace(self.persona, g.memories, g.self_facts, g.tool_log)
