"""gather (tool loop, or offline look-ups) → reply (chat bubbles) → remember."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.companion.nodes import CompanionNodes
from ragchat.agents.companion.state import CompanionState
from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.shared.state import AgentGraph


def build_graph(deps: AgentDeps, agent: AgentConfig) -> AgentGraph:
    nodes = CompanionNodes(deps, agent)
    graph = StateGraph(CompanionState)
    graph.add_node("gather", nodes.gather)
    graph.add_node("reply", nodes.reply)
    graph.add_node("remember", nodes.remember)
    graph.add_edge(START, "gather")
    graph.add_edge("gather", "reply")
    graph.add_edge("reply", "remember")
    graph.add_edge("remember", END)
    return graph.compile(name=agent.name)
