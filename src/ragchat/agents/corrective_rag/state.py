from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit


@dataclass
class CorrectiveState(AgentState):
    action: str = "retrieve"  # "retrieve" | "respond"
    query: str = ""  # the search query: the question, then each rewrite
    question: str = ""  # the standalone question: passages are graded and answered against it
    attempts: int = 0
    rewritten_queries: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)  # the latest attempt's hits
    grades: list[dict[str, Any]] = field(default_factory=list)  # every graded passage
    kept: list[Hit] = field(default_factory=list)  # relevant passages over all attempts
    kept_scores: dict[str, float] = field(default_factory=dict)  # chunk id → grade
    gate: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0


class Decision(BaseModel):
    """Structured output of the decide step."""

    action: Literal["retrieve", "respond"]
    query: str = Field(default="", description="standalone search query when retrieving")
    reasoning: str = ""


class Grades(BaseModel):
    """Structured output of the grade step: one 0..1 relevance score per passage, in order."""

    scores: list[float]
