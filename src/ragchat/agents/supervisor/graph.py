"""safety → refuse | route → ask_topic | dispatch (the agent's graph) → finalize."""

from __future__ import annotations

from collections.abc import Mapping

from langgraph.graph import END, START, StateGraph

from ragchat.agents.shared.state import AgentRunner, CompiledGraph
from ragchat.agents.supervisor.nodes import SupervisorNodes
from ragchat.agents.supervisor.state import SupervisorState
from ragchat.agents.supervisor.steps import AgentRouter, first_router
from ragchat.agents.wiring import AgentWiring


def build_graph(
    wiring: AgentWiring, agents: Mapping[str, AgentRunner], router: AgentRouter
) -> CompiledGraph:
    nodes = SupervisorNodes(wiring, agents, router, first_router(wiring, router))
    graph = StateGraph(SupervisorState)
    graph.add_node("safety", nodes.safety)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("route", nodes.route)
    graph.add_node("ask_topic", nodes.ask_topic)
    graph.add_node("dispatch", nodes.dispatch)
    graph.add_node("finalize", nodes.finalize)
    graph.add_edge(START, "safety")
    graph.add_conditional_edges("safety", nodes.after_safety)
    graph.add_conditional_edges("route", nodes.after_route)
    for step in ("refuse", "ask_topic", "dispatch"):
        graph.add_edge(step, "finalize")
    graph.add_edge("finalize", END)
    return graph.compile(name="supervisor")
