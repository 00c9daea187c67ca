"""The state fields every agent graph has: the turn's input (set by the supervisor) and the
output the supervisor reads back. Agents subclass ``AgentState`` with their own fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from langgraph.graph.state import CompiledStateGraph

from ragchat.types import Citation, HistoryMessage

Update = dict[str, Any]


def add_timings(old: dict[str, float], new: dict[str, float]) -> dict[str, float]:
    """Sums per step, so a node that runs twice (a retry) reports its total time."""
    out = dict(old)
    for key, ms in new.items():
        out[key] = round(out.get(key, 0.0) + ms, 3)
    return out


def merge_dicts(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {**old, **new}


@dataclass
class AgentState:
    # input
    message: str = ""
    history: list[HistoryMessage] = field(default_factory=list)
    user_id: str = ""
    conversation_id: str = ""
    user_profile: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # TurnOptions.to_dict()
    # output
    reply: str = ""
    citations: list[Citation] = field(default_factory=list)
    bubbles: list[str] | None = None
    no_answer: bool = False
    metadata: Annotated[dict[str, Any], merge_dicts] = field(default_factory=dict)
    timings: Annotated[dict[str, float], add_timings] = field(default_factory=dict)


AGENT_INPUT_FIELDS = ("message", "history", "user_id", "conversation_id", "user_profile", "options")
AGENT_OUTPUT_FIELDS = ("reply", "citations", "bubbles", "no_answer", "metadata", "timings")


# What every agent package's ``build_graph(deps, agent)`` returns.
AgentGraph = CompiledStateGraph[Any, Any, Any, Any]
