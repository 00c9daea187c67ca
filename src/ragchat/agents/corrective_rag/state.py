from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragchat.agents.metadata import AgentTrace
from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit


class Decision(BaseModel):
    """Structured output of the decide step."""

    action: Literal["retrieve", "respond"]
    query: str = Field(default="", description="standalone search query when retrieving")
    reasoning: str = ""


class Grades(BaseModel):
    """Structured output of the grade step: one 0..1 relevance score per passage, in order."""

    scores: list[float]


@dataclass(frozen=True)
class GradedPassage:
    attempt: int
    chunk_id: str
    score: float
    kept: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "chunk_id": self.chunk_id,
            "score": self.score,
            "kept": self.kept,
        }


@dataclass(frozen=True)
class CorrectiveTrace:
    """The decision, every graded passage, the rewrites and the confidence (each present once
    its step ran)."""

    decision: Decision
    retrieval_attempts: int
    grades: tuple[GradedPassage, ...] | None = None
    rewritten_queries: tuple[str, ...] | None = None
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "decision": {"action": self.decision.action, "reasoning": self.decision.reasoning},
            "retrieval_attempts": self.retrieval_attempts,
        }
        if self.grades is not None:
            out["grades"] = [g.to_json() for g in self.grades]
        if self.rewritten_queries is not None:
            out["rewritten_queries"] = list(self.rewritten_queries)
        if self.confidence is not None:
            out["confidence"] = self.confidence
        return out


@dataclass
class CorrectiveState(AgentState):
    decision: Decision | None = None
    query: str = ""  # the search query: the question, then each rewrite
    question: str = ""  # the standalone question: passages are graded and answered against it
    attempts: int = 0
    rewritten_queries: list[str] | None = None
    hits: list[Hit] = field(default_factory=list)  # the latest attempt's hits
    grades: list[GradedPassage] | None = None  # every graded passage
    kept: list[Hit] = field(default_factory=list)  # relevant passages over all attempts
    kept_scores: dict[str, float] = field(default_factory=dict)  # chunk id → grade
    confidence: float | None = None

    def trace(self) -> AgentTrace | None:
        if self.decision is None:
            return None
        return CorrectiveTrace(
            decision=self.decision,
            retrieval_attempts=self.attempts,
            grades=None if self.grades is None else tuple(self.grades),
            rewritten_queries=(
                None if self.rewritten_queries is None else tuple(self.rewritten_queries)
            ),
            confidence=self.confidence,
        )
