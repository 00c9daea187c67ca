"""ragchat: a self-hosted, multi-agent, conversational RAG chat server that works offline."""

__version__ = "0.1.0"
