"""``GET /health``: liveness plus which parts are degraded, for load balancers and humans."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ragchat.api.deps import State
from ragchat.api.services._sync import run_sync

router = APIRouter(tags=["health"])


@router.get("/health", summary="Status of the server and its components")
async def health(state: State) -> dict[str, Any]:
    """Always 200 while the process serves: ``status`` says "healthy" or "degraded",
    ``degraded`` names the failing parts (store, embedder, llm, kb:<name>) and ``vectors``
    counts the searchable vectors over all knowledge bases."""
    return await run_sync(state.health.report)


@router.get("/agents", summary="The configured agents: what each answers from")
async def agents(state: State) -> list[dict[str, Any]]:
    """For the page's "Answer from" choice: each agent's name (as clients call it), what it
    does, its own knowledge base (the samples), and whether it needs one to be chosen
    (``needs_kb``: it answers over whichever knowledge base a conversation is bound to)."""
    names = state.chat.names
    return [
        {
            "name": names.public(name),
            "description": agent.description,
            "knowledge_base": agent.knowledge_base or agent.persona_knowledge_base,
            "needs_kb": agent.any_knowledge_base and not agent.knowledge_base,
            "routable": agent.routable,
        }
        for name, agent in sorted(state.engine.agents.items())
    ]
