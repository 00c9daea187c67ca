"""Pieces every agent graph shares: the base state, node timing, LLM and streaming helpers,
and answering from retrieved passages."""
