"""Stateless textbook-style questions (``POST /query``) through the engine's rag path, so the
answer is grounded and cited exactly as in chat: book-wide, chapter-aware (a chapter filter) or
selected-text-only (the passage is the only context)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.kinds import get_kind
from ragchat.agents.metadata import TurnMetadata
from ragchat.agents.types import ConversationState, TurnOptions
from ragchat.api.errors import ApiError
from ragchat.types import Citation

from ._sync import run_sync
from .chat import public_citation
from .engine_loop import Engine

Mode = Literal["book-wide", "chapter-aware", "selected-text-only"]
MIN_QUESTION_CHARS = 3


@dataclass
class QueryAnswer:
    answer: str
    sources: list[dict[str, Any]]
    query_time_ms: float
    mode: Mode
    agent: str
    kb: str | None
    no_answer: bool
    metadata: dict[str, Any] = field(default_factory=dict)


def mode_for(context: str | None, use_context_only: bool, chapter: str | None) -> Mode:
    if use_context_only:
        return "selected-text-only"
    return "chapter-aware" if chapter else "book-wide"


def pick_agent(agents: dict[str, AgentConfig], kb: str | None, needs_modes: bool) -> AgentConfig:
    """A knowledge-base agent for the question: one with textbook modes over ``kb`` first,
    then any with textbook modes (searching ``kb`` instead of its own), then any over ``kb``."""
    kb_agents = [
        a for a in agents.values() if get_kind(a.kind).answers_questions and a.knowledge_base
    ]
    ranked = (
        [a for a in kb_agents if a.textbook_modes and (kb is None or a.knowledge_base == kb)]
        + [a for a in kb_agents if a.textbook_modes]
        + ([] if needs_modes else [a for a in kb_agents if a.knowledge_base == kb])
        + ([] if needs_modes else kb_agents)
    )
    if not ranked:
        what = "textbook modes (chapter or selected text)" if needs_modes else "a knowledge base"
        raise ApiError(400, "no_agent", f"No configured agent supports {what}.")
    return ranked[0]


def source_of(citation: Citation) -> dict[str, Any]:
    public = public_citation(citation)
    section = " > ".join(citation.section_path) or citation.location
    return {
        "index": citation.index,
        "chunk_id": citation.chunk_id,
        "title": citation.title,
        "source": public["source"],
        "chapter": citation.chapter,
        "section": section,
        "location": citation.location,
        "page": citation.page,
        "slide": citation.slide,
        "sheet": citation.sheet,
        "rows": None if citation.rows is None else list(citation.rows),
        "preview": citation.preview,
        "score": citation.score,
    }


KBVisible = Callable[[str, str], bool]  # (user id, knowledge base) → may this user search it


class QueryService:
    def __init__(self, engine: Engine, kb_visible: KBVisible | None = None) -> None:
        self.engine = engine
        self.kb_visible = kb_visible

    async def ask(
        self,
        user_id: str,
        question: str,
        *,
        context: str | None = None,
        use_context_only: bool = False,
        top_k: int | None = None,
        chapter: str | None = None,
        kb: str | None = None,
    ) -> QueryAnswer:
        question = question.strip()
        if len(question) < MIN_QUESTION_CHARS:
            raise ApiError(
                400,
                "invalid_question",
                f"The question must be at least {MIN_QUESTION_CHARS} characters.",
            )
        if use_context_only and not (context and context.strip()):
            raise ApiError(
                400, "missing_context", "use_context_only needs the selected text in 'context'."
            )
        visible = self.kb_visible
        if kb is not None and visible is not None and not await run_sync(visible, user_id, kb):
            raise ApiError(
                404,
                "knowledge_base_not_visible",
                f"The knowledge base {kb!r} is not visible to this caller: it does not "
                "exist or holds no document you may see.",
            )
        mode = mode_for(context, use_context_only, chapter)
        agent = pick_agent(self.engine.agents, kb, needs_modes=mode != "book-wide")
        options = TurnOptions(
            agent=agent.name,
            chapter=chapter if mode == "chapter-aware" else None,
            selected_text=context if mode == "selected-text-only" else None,
            top_k=top_k,
            kb=kb if kb and kb != agent.knowledge_base else None,
        )
        start = time.perf_counter()
        result = await self.engine.run_turn(
            conversation=ConversationState(conversation_id=f"query-{uuid.uuid4().hex}"),
            message=question,
            user_id=user_id,
            options=options,
        )
        elapsed = round((time.perf_counter() - start) * 1000.0, 1)
        sources = [source_of(c) for c in result.citations]
        return QueryAnswer(
            answer=result.reply,
            sources=sources,
            query_time_ms=elapsed,
            mode=mode,
            agent=result.agent,
            kb=kb or agent.knowledge_base,
            no_answer=result.no_answer,
            metadata=_retrieval_metadata(result.metadata),
        )


def _retrieval_metadata(metadata: TurnMetadata) -> dict[str, Any]:
    """How the answer was searched: the retrieval mode and the gate, when the agent searched."""
    out: dict[str, Any] = {}
    if metadata.retrieval is not None:
        out["retrieval"] = metadata.retrieval.to_json()
    if metadata.gate is not None:
        out["gate"] = metadata.gate.to_json()
    return out
