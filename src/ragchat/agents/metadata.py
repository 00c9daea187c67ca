"""``TurnMetadata``: the typed account of a turn (safety, routing, retrieval and gate, what the
caller persists, timings), and its parts. ``to_json`` is the one place it becomes the JSON the
API stores with the reply and returns as ``metadata``; the keys are part of the HTTP contract.

An agent kind adds its own account as an ``AgentTrace`` (each kind's ``state.py`` defines one),
merged into the same JSON object, so a new kind needs no change here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ragchat.reader.decision import AnswerDecision

T = TypeVar("T")
RouterKind = Literal["llm", "embedding", "sticky", "forced", "switch", "safety", "knowledge_base"]
RetrievalMode = Literal["selected_text", "chapter", "book", "knowledge_base"]


class AgentTrace(Protocol):
    """An agent kind's own metadata (the corrective agent's grades, the companion's memories)."""

    def to_json(self) -> dict[str, Any]: ...


@runtime_checkable
class CrisisTrace(Protocol):
    """A trace that reports whether the agent's own check saw self-harm intent (support)."""

    @property
    def crisis(self) -> bool: ...


@dataclass(frozen=True)
class Routing:
    """Who answers the turn and why. ``router`` says which rule decided: the model ("llm"),
    the embedding router, session stickiness, a forced agent, a bare switch phrase, or the
    safety stage. The optional fields appear in the JSON only when set."""

    agent: str
    reasoning: str
    confidence: float
    reassigned: bool
    router: RouterKind
    low_confidence: bool | None = None
    scores: Mapping[str, float] | None = None  # the embedding router's per-agent scores
    fallback: str | None = None  # why the model's routing was not used
    switch_phrase: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "confidence", round(float(self.confidence), 4))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": self.agent,
            "reasoning": self.reasoning,
            "confidence": self.confidence,
            "reassigned": self.reassigned,
            "router": self.router,
        }
        optional = {
            "low_confidence": self.low_confidence,
            "scores": None if self.scores is None else dict(self.scores),
            "fallback": self.fallback,
            "switch_phrase": self.switch_phrase,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out


@dataclass(frozen=True)
class SafetyCheck:
    """The safety stage's decision on the message (``checked`` False: no classifier)."""

    checked: bool
    safe: bool = True
    category: str | None = None
    code: str | None = None
    score: float | None = None
    crisis: bool = False

    @property
    def blocked(self) -> bool:
        return self.checked and (not self.safe or self.crisis)

    def to_json(self) -> dict[str, Any]:
        if not self.checked:
            return {"checked": False}
        return {
            "checked": True,
            "safe": self.safe,
            "category": self.category,
            "code": self.code,
            "score": self.score,
            "crisis": self.crisis,
        }


@dataclass(frozen=True)
class GateInfo:
    """The relevance gate on what retrieval found (``threshold`` None: no gate applied)."""

    no_answer: bool
    relevance: float
    threshold: float | None
    hits: int
    chunk_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "no_answer": self.no_answer,
            "relevance": self.relevance,
            "threshold": self.threshold,
            "hits": self.hits,
            "chunk_ids": list(self.chunk_ids),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class RetrievalInfo:
    """How a rag agent searched: the mode, the query, the model's tool queries (if any)."""

    mode: RetrievalMode
    query: str
    tool_queries: tuple[str, ...] = ()
    chapter: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode": self.mode,
            "query": self.query,
            "tool_queries": list(self.tool_queries),
        }
        if self.chapter is not None:
            out["chapter"] = self.chapter
        return out


@dataclass(frozen=True)
class TurnMetadata:
    """Everything about a turn besides the reply. ``assigned_agent``, ``user_profile`` (set
    when the turn changed it) and ``conversation_crisis`` (self-harm intent seen in this turn
    or an earlier one) are for the caller to persist on the conversation."""

    routing: Routing
    assigned_agent: str | None
    conversation_crisis: bool = False
    safety: SafetyCheck = field(default_factory=lambda: SafetyCheck(checked=False))
    search_query: str | None = None
    retrieval: RetrievalInfo | None = None
    gate: GateInfo | None = None
    answer_decision: AnswerDecision | None = None
    user_profile: UserProfile | None = None
    trace: AgentTrace | None = None
    timings: Mapping[str, float] = field(default_factory=dict)

    def traced(self, kind: type[T]) -> T:
        """The agent's trace as ``kind`` (``TypeError`` when the turn has another kind)."""
        if not isinstance(self.trace, kind):
            raise TypeError(f"the turn's trace is {type(self.trace).__name__}, not {kind}")
        return self.trace

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"safety": self.safety.to_json()}
        if self.routing.router == "safety":
            out["category"] = self.safety.category
        if self.retrieval is not None:
            out["retrieval"] = self.retrieval.to_json()
        if self.gate is not None:
            out["gate"] = self.gate.to_json()
        if self.answer_decision is not None:
            out["answer_decision"] = self.answer_decision.to_json()
        if self.search_query is not None:
            out["search_query"] = self.search_query
        if self.trace is not None:
            out.update(self.trace.to_json())
        if self.user_profile is not None:
            out["user_profile"] = self.user_profile.to_json()
        out["routing"] = self.routing.to_json()
        out["assigned_agent"] = self.assigned_agent
        out["conversation_crisis"] = self.conversation_crisis
        out["timings"] = dict(self.timings)
        return out


class UserProfile(BaseModel):
    """What an agent has learnt about the user in a conversation (the companion keeps the
    name). Stored on the conversation; facts a newer version adds are kept as extras."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> UserProfile:
        return cls.model_validate(dict(data or {}))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def merged(self, update: UserProfile) -> UserProfile:
        """This profile with ``update``'s facts on top."""
        return UserProfile.model_validate({**self.to_json(), **update.to_json()})
