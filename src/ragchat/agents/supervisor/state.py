from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, Field

from ragchat.agents.metadata import Routing, SafetyCheck
from ragchat.agents.shared.state import add_timings
from ragchat.agents.types import AgentOutcome, Turn, TurnResult

SAFETY_AGENT = "safety"  # TurnResult.agent of a refused message
SUPERVISOR_AGENT = "supervisor"  # TurnResult.agent when the supervisor itself replies


@dataclass
class SupervisorState:
    turn: Turn = field(default_factory=lambda: Turn(message=""))
    # safety
    safety: SafetyCheck = field(default_factory=lambda: SafetyCheck(checked=False))
    refusal: str = ""
    # routing
    routing: Routing | None = None
    agent_message: str = ""  # the message the agent sees (switch phrase removed)
    # output: the supervisor's own reply, or the agent's outcome; ``finalize`` makes the result
    reply: str = ""
    outcome: AgentOutcome | None = None
    result: TurnResult | None = None
    timings: Annotated[dict[str, float], add_timings] = field(default_factory=dict)


class RouteChoice(BaseModel):
    """Structured output of the model router."""

    agent: str
    reasoning: str = ""
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
