from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, Field

from ragchat.agents.shared.state import add_timings, merge_dicts
from ragchat.agents.types import Citation, HistoryMessage

SAFETY_AGENT = "safety"  # TurnResult.agent of a refused message
SUPERVISOR_AGENT = "supervisor"  # TurnResult.agent when the supervisor itself replies


@dataclass
class SupervisorState:
    # input
    message: str = ""
    user_id: str = ""
    conversation_id: str = ""
    history: list[HistoryMessage] = field(default_factory=list)
    user_profile: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    assigned_agent: str | None = None  # persisted by the caller between turns
    crisis_flagged: bool = False  # ConversationState.crisis
    # safety
    blocked: bool = False
    refusal: str = ""
    # routing
    agent: str = ""
    agent_message: str = ""  # the message the agent sees (switch phrase removed)
    routing: dict[str, Any] = field(default_factory=dict)
    # output
    reply: str = ""
    citations: list[Citation] = field(default_factory=list)
    bubbles: list[str] | None = None
    no_answer: bool = False
    metadata: Annotated[dict[str, Any], merge_dicts] = field(default_factory=dict)
    timings: Annotated[dict[str, float], add_timings] = field(default_factory=dict)


class RouteChoice(BaseModel):
    """Structured output of the model router."""

    agent: str
    reasoning: str = ""
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
