"""The state every agent graph shares: the turn (set by the supervisor) and the typed outputs
the supervisor reads back as an ``AgentOutcome``. Each agent kind subclasses ``AgentState``
with its own fields and its own ``trace`` (its part of the turn's metadata)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Protocol, TypeVar

from langgraph.graph.state import CompiledStateGraph

from ragchat.agents.metadata import AgentTrace, AnswerDecision, GateInfo, RetrievalInfo
from ragchat.agents.types import AgentOutcome, Turn, UserProfile
from ragchat.types import Citation

Update = dict[str, Any]  # what a node returns: the fields it changes


def add_timings(old: dict[str, float], new: dict[str, float]) -> dict[str, float]:
    """Sums per step, so a node that runs twice (a retry) reports its total time."""
    out = dict(old)
    for key, ms in new.items():
        out[key] = round(out.get(key, 0.0) + ms, 3)
    return out


@dataclass
class AgentState:
    turn: Turn = field(default_factory=lambda: Turn(message=""))
    # outputs
    reply: str = ""
    citations: list[Citation] = field(default_factory=list)
    bubbles: list[str] | None = None
    no_answer: bool = False
    search_query: str | None = None
    retrieval: RetrievalInfo | None = None
    gate: GateInfo | None = None
    answer_decision: AnswerDecision | None = None
    user_profile: UserProfile | None = None  # set when the turn learnt something new
    timings: Annotated[dict[str, float], add_timings] = field(default_factory=dict)

    def trace(self) -> AgentTrace | None:
        return None

    def outcome(self) -> AgentOutcome:
        return AgentOutcome(
            reply=self.reply,
            citations=tuple(self.citations),
            bubbles=None if self.bubbles is None else tuple(self.bubbles),
            no_answer=self.no_answer,
            search_query=self.search_query,
            retrieval=self.retrieval,
            gate=self.gate,
            answer_decision=self.answer_decision,
            user_profile=self.user_profile,
            trace=self.trace(),
            timings=dict(self.timings),
        )


S = TypeVar("S", bound=AgentState)
CompiledGraph = CompiledStateGraph[Any, Any, Any, Any]


class AgentRunner(Protocol):
    """What the supervisor dispatches a turn to; every agent kind builds one."""

    async def run(self, turn: Turn) -> AgentOutcome: ...


class GraphAgent(Generic[S]):
    """An agent that is a compiled LangGraph graph over ``state_type``. Run inside a node of
    the supervisor's graph, its token events reach the supervisor's stream."""

    def __init__(self, graph: CompiledGraph, state_type: type[S]) -> None:
        self.graph = graph
        self.state_type = state_type

    async def run(self, turn: Turn) -> AgentOutcome:
        values = await self.graph.ainvoke(self.state_type(turn=turn))
        return self.state_type(**values).outcome()
