from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragchat.agents.metadata import AgentTrace
from ragchat.agents.shared.state import AgentState


@dataclass(frozen=True)
class SupportTrace:
    crisis: bool

    def to_json(self) -> dict[str, Any]:
        return {"crisis": self.crisis}


@dataclass
class SupportState(AgentState):
    crisis: bool | None = None  # None until checked

    def trace(self) -> AgentTrace | None:
        return None if self.crisis is None else SupportTrace(self.crisis)
