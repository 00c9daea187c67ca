"""``rag`` agent: knowledge-base Q&A with citations; textbook modes (book-wide,
chapter-aware, selected-text-only) when the agent has ``textbook_modes``."""

from ragchat.agents.rag.graph import build_agent

__all__ = ["build_agent"]
