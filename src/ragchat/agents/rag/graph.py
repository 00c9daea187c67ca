"""retrieve (tool call or direct) → gate → refuse (NO_ANSWER) | answer (cited)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.rag.nodes import RagNodes
from ragchat.agents.rag.state import RagState
from ragchat.agents.shared.state import GraphAgent
from ragchat.agents.wiring import AgentWiring


def build_agent(wiring: AgentWiring, agent: AgentConfig) -> GraphAgent[RagState]:
    nodes = RagNodes(wiring, agent)
    graph = StateGraph(RagState)
    graph.add_node("retrieve", nodes.retrieve)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("answer", nodes.answer)
    graph.add_edge(START, "retrieve")
    graph.add_conditional_edges("retrieve", nodes.after_retrieve)
    graph.add_edge("refuse", END)
    graph.add_edge("answer", END)
    return GraphAgent(graph.compile(name=agent.name), RagState)
