"""retrieve (tool call or direct) → gate → refuse (NO_ANSWER) | answer (cited)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.rag.nodes import RagNodes
from ragchat.agents.rag.state import RagState
from ragchat.agents.shared.state import AgentGraph


def build_graph(deps: AgentDeps, agent: AgentConfig) -> AgentGraph:
    nodes = RagNodes(deps, agent)
    graph = StateGraph(RagState)
    graph.add_node("retrieve", nodes.retrieve)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("answer", nodes.answer)
    graph.add_edge(START, "retrieve")
    graph.add_conditional_edges("retrieve", nodes.after_retrieve)
    graph.add_edge("refuse", END)
    graph.add_edge("answer", END)
    return graph.compile(name=agent.name)
