"""``support`` agent: empathetic, non-clinical emotional support; no retrieval."""

from ragchat.agents.support.graph import build_agent

__all__ = ["build_agent"]
