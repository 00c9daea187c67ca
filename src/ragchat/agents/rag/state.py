from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit


@dataclass
class RagState(AgentState):
    query: str = ""
    hits: list[Hit] = field(default_factory=list)
    gate: dict[str, Any] = field(default_factory=dict)
