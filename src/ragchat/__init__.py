"""ragchat: a self-hosted, multi-agent, conversational RAG chat server that works offline.

``ragchat.Chatbot`` asks the same engine from Python, no server (``ragchat.chatbot``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Answer", "Chatbot", "__version__"]

if TYPE_CHECKING:
    from ragchat.chatbot import Answer, Chatbot


def __getattr__(name: str) -> Any:
    """``Chatbot`` on first use: ``import ragchat`` stays cheap for the CLI."""
    if name in ("Chatbot", "Answer"):
        from ragchat import chatbot

        return getattr(chatbot, name)
    raise AttributeError(f"module 'ragchat' has no attribute {name!r}")
