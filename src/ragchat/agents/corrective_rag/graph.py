"""decide → respond (small talk) | retrieve → grade → rewrite → retrieve (at most twice)
| assess (confidence) → generate (cited) | insufficient (no answer, see a professional)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.corrective_rag.nodes import CorrectiveNodes
from ragchat.agents.corrective_rag.state import CorrectiveState
from ragchat.agents.shared.state import GraphAgent
from ragchat.agents.wiring import AgentWiring


def build_agent(wiring: AgentWiring, agent: AgentConfig) -> GraphAgent[CorrectiveState]:
    nodes = CorrectiveNodes(wiring, agent)
    graph = StateGraph(CorrectiveState)
    graph.add_node("decide", nodes.decide)
    graph.add_node("respond", nodes.respond)
    graph.add_node("retrieve", nodes.retrieve)
    graph.add_node("grade", nodes.grade)
    graph.add_node("rewrite", nodes.rewrite)
    graph.add_node("assess", nodes.assess)
    graph.add_node("generate", nodes.generate)
    graph.add_node("insufficient", nodes.insufficient)
    graph.add_edge(START, "decide")
    graph.add_conditional_edges("decide", nodes.after_decide)
    graph.add_edge("retrieve", "grade")
    graph.add_conditional_edges("grade", nodes.after_grade)
    graph.add_edge("rewrite", "retrieve")
    graph.add_conditional_edges("assess", nodes.after_assess)
    for last in ("respond", "generate", "insufficient"):
        graph.add_edge(last, END)
    return GraphAgent(graph.compile(name=agent.name), CorrectiveState)
