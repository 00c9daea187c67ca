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
