"""check (crisis language?) → crisis resources | respond."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.shared.state import GraphAgent
from ragchat.agents.support.nodes import SupportNodes
from ragchat.agents.support.state import SupportState
from ragchat.agents.wiring import AgentWiring


def build_agent(wiring: AgentWiring, agent: AgentConfig) -> GraphAgent[SupportState]:
    nodes = SupportNodes(wiring, agent)
    graph = StateGraph(SupportState)
    graph.add_node("check", nodes.check)
    graph.add_node("crisis", nodes.crisis)
    graph.add_node("respond", nodes.respond)
    graph.add_edge(START, "check")
    graph.add_conditional_edges("check", nodes.after_check)
    graph.add_edge("crisis", END)
    graph.add_edge("respond", END)
    return GraphAgent(graph.compile(name=agent.name), SupportState)
