"""``support`` agent: empathetic, non-clinical emotional support; no retrieval."""

from ragchat.agents.support.graph import build_graph

__all__ = ["build_graph"]
