"""reformulate → classify → clarify | template | retrieve → refuse (NO_ANSWER) | generate;
a vague request goes retrieve → clarify | generate when the agent searches before asking."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragchat.agents.config import AgentConfig
from ragchat.agents.conversational_rag.nodes import ConversationalNodes
from ragchat.agents.conversational_rag.state import ConversationalState
from ragchat.agents.shared.state import GraphAgent
from ragchat.agents.wiring import AgentWiring


def build_agent(wiring: AgentWiring, agent: AgentConfig) -> GraphAgent[ConversationalState]:
    nodes = ConversationalNodes(wiring, agent)
    graph = StateGraph(ConversationalState)
    graph.add_node("reformulate", nodes.reformulate)
    graph.add_node("classify", nodes.classify)
    graph.add_node("clarify", nodes.clarify)
    graph.add_node("template", nodes.template)
    graph.add_node("retrieve", nodes.retrieve)
    graph.add_node("refuse", nodes.refuse)
    graph.add_node("generate", nodes.generate)
    graph.add_edge(START, "reformulate")
    graph.add_edge("reformulate", "classify")
    graph.add_conditional_edges("classify", nodes.after_classify)
    graph.add_conditional_edges("retrieve", nodes.after_retrieve)
    for last in ("clarify", "template", "refuse", "generate"):
        graph.add_edge(last, END)
    return GraphAgent(graph.compile(name=agent.name), ConversationalState)
