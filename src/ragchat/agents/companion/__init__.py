"""``companion`` agent: a persona from a file that remembers the user (long-term memory,
a small profile) and talks about its own invented life (its own knowledge base)."""

from ragchat.agents.companion.graph import build_agent

__all__ = ["build_agent"]
