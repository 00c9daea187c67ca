"""``conversational_rag`` agent: follow-ups reformulated into standalone queries, intent
classification (information / clarification / template intents), then cited answers."""

from ragchat.agents.conversational_rag.graph import build_agent

__all__ = ["build_agent"]
