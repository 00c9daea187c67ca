"""gather (tool loop, or look-ups up front) → reply (chat bubbles) → remember."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.companion.nodes import CompanionNodes
from ragchat.agents.companion.state import CompanionState
from ragchat.agents.config import AgentConfig
from ragchat.agents.shared.state import GraphAgent
from ragchat.agents.wiring import AgentWiring


def build_agent(wiring: AgentWiring, agent: AgentConfig) -> GraphAgent[CompanionState]:
    nodes = CompanionNodes(wiring, agent)
    graph = StateGraph(CompanionState)
    graph.add_node("gather", nodes.gather)
    graph.add_node("reply", nodes.reply)
    graph.add_node("remember", nodes.remember)
    graph.add_edge(START, "gather")
    graph.add_edge("gather", "reply")
    graph.add_edge("reply", "remember")
    graph.add_edge("remember", END)
    return GraphAgent(graph.compile(name=agent.name), CompanionState)
