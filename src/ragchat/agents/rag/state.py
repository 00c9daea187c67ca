from __future__ import annotations

from dataclasses import dataclass, field

from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit


@dataclass
class RagState(AgentState):
    query: str = ""
    hits: list[Hit] = field(default_factory=list)
