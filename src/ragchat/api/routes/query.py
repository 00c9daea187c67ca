"""``POST /query``: a stateless, grounded, cited answer (textbook modes)."""

from __future__ import annotations

from fastapi import APIRouter

from ragchat.api.deps import LimitedUser, State
from ragchat.api.schemas import ERRORS, QueryRequest, QueryResponse, SourceOut

router = APIRouter(tags=["query"], responses=ERRORS)


@router.post("/query", response_model=QueryResponse, summary="Ask the knowledge base")
async def query(body: QueryRequest, me: LimitedUser, state: State) -> QueryResponse:
    """Modes: "book-wide" (default), "chapter-aware" (``chapter_id`` filters the search) and
    "selected-text-only" (``use_context_only``: ``context`` is the only source). Without
    ``use_context_only`` the ``context`` is not used. 400 for a question under 3 characters or
    context-only mode without context."""
    answer = await state.query.ask(
        me.user_id,
        body.question,
        context=body.context,
        use_context_only=body.use_context_only,
        top_k=body.top_k,
        chapter=body.chapter_id,
        kb=body.kb,
    )
    return QueryResponse(
        answer=answer.answer,
        sources=[SourceOut(**s) for s in answer.sources],
        query_time_ms=answer.query_time_ms,
        mode=answer.mode,
        agent=state.chat.names.public(answer.agent),
        kb=answer.kb,
        no_answer=answer.no_answer,
        metadata=answer.metadata,
    )
