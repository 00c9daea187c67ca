"""``corrective_rag`` agent: retrieve, grade every passage, rewrite the query and retry when
the evidence is weak, and decline (suggesting a professional) when confidence stays low."""

from ragchat.agents.corrective_rag.graph import build_agent

__all__ = ["build_agent"]
