from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ragchat.agents.metadata import AgentTrace
from ragchat.agents.shared.state import AgentState
from ragchat.types import Hit

INFORMATION = "information"
CLARIFICATION = "clarification"


class IntentChoice(BaseModel):
    """Structured output of the model's classify step."""

    intent: str
    confidence: float = 0.5
    reasoning: str = ""


@dataclass(frozen=True)
class Intent:
    """What the request is: ``information``, ``clarification`` or a template intent's name;
    ``classifier`` says which implementation decided."""

    intent: str
    confidence: float
    reasoning: str
    classifier: Literal["llm", "embedding"]

    def to_json(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "confidence": round(self.confidence, 4),
            "reasoning": self.reasoning,
            "classifier": self.classifier,
        }


@dataclass(frozen=True)
class ConversationalTrace:
    reformulated_query: str
    intent: Intent | None = None
    clarifying_question: bool = False
    template: str | None = None
    # What the retriever was given, when it is not the reformulated query (a follow-up
    # searched with the person's earlier messages beside it).
    searched: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reformulated_query": self.reformulated_query}
        if self.searched and self.searched != self.reformulated_query:
            out["searched"] = self.searched
        if self.intent is not None:
            out["intent"] = self.intent.to_json()
        if self.clarifying_question:
            out["clarifying_question"] = True
        if self.template is not None:
            out["template"] = self.template
        return out


@dataclass
class ConversationalState(AgentState):
    query: str = ""  # the standalone (reformulated) query
    searched: str = ""  # what the retriever is given ("" = the query)
    intent: Intent | None = None
    hits: list[Hit] = field(default_factory=list)
    clarified: bool = False
    template: str | None = None

    def trace(self) -> AgentTrace | None:
        if not self.query:
            return None
        return ConversationalTrace(
            self.query, self.intent, self.clarified, self.template, self.searched
        )
