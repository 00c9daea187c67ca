from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit

INFORMATION = "information"
CLARIFICATION = "clarification"


@dataclass
class ConversationalState(AgentState):
    query: str = ""  # the standalone (reformulated) query
    intent: str = INFORMATION
    hits: list[Hit] = field(default_factory=list)
    gate: dict[str, Any] = field(default_factory=dict)


class IntentChoice(BaseModel):
    """Structured output of the classify step."""

    intent: str
    confidence: float = 0.5
    reasoning: str = ""
