"""Stateless textbook-style questions (``POST /query``) through the engine's rag path, so the
answer is grounded and cited exactly as in chat: book-wide, chapter-aware (a chapter filter) or
selected-text-only (the passage is the only context).

A book-wide question without ``kb`` goes to the knowledge base that covers it best among
those the caller may see (``choose_kb``): each is searched and the best relevance wins, which
also reaches knowledge bases no agent describes (uploads). Measured against routing the
question as ``/chat`` routes a first message in docs/benchmarks.md (issue 28)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.kinds import get_kind
from ragchat.agents.metadata import TurnMetadata
from ragchat.agents.request import TurnRequest
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
    """A knowledge-base agent for the question. Book-wide: the agent of ``kb`` (its own
    gate, refusal and disclaimer), else one that answers over any knowledge base (a user's
    own), else one with textbook modes (over ``kb`` first, else searching ``kb`` instead of its
    own), else any. Chapter or selected-text modes: one with textbook modes (over ``kb``
    first)."""
    kb_agents = [
        a for a in agents.values() if get_kind(a.kind).answers_questions and a.knowledge_base
    ]
    owners = [a for a in kb_agents if kb is not None and a.knowledge_base == kb]
    any_kb = [a for a in agents.values() if a.any_knowledge_base]
    ranked = (
        ([] if needs_modes else owners)
        + ([] if needs_modes or kb is None else any_kb)
        + [a for a in kb_agents if a.textbook_modes and (kb is None or a.knowledge_base == kb)]
        + [a for a in kb_agents if a.textbook_modes]
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


# (user id, knowledge base name) → where that knowledge base is stored, None when this user may
# not see it (a renamed one is stored under its first name).
KBResolver = Callable[[str, str], str | None]
VisibleKBs = Callable[[str], list[str]]  # user id → the knowledge bases this user may search
# (user id, storage) → what that user calls it now (a renamed knowledge base by its new name).
KBName = Callable[[str, str], str]


class QueryService:
    def __init__(
        self,
        engine: Engine,
        kb_visible: KBResolver | None = None,
        visible_kbs: VisibleKBs | None = None,
        kb_name: KBName | None = None,
    ) -> None:
        self.engine = engine
        self.kb_visible = kb_visible
        self.visible_kbs = visible_kbs
        self.kb_name = kb_name

    async def choose_kb(self, user_id: str, question: str) -> tuple[str | None, dict[str, float]]:
        """The knowledge base among those ``user_id`` may see whose search covers
        ``question`` best (its relevance, each searched by the agent that would answer from
        it), with every candidate's relevance; (None, {}) when no knowledge base is visible
        (the default agent's own then answers)."""
        if self.visible_kbs is None:
            return None, {}
        probes = []
        for name in await run_sync(self.visible_kbs, user_id):
            try:
                probes.append((pick_agent(self.engine.agents, name, needs_modes=False).name, name))
            except ApiError:  # no agent answers questions: ``ask`` says so
                continue
        if len(probes) <= 1:
            return (probes[0][1] if probes else None), {}
        scores = await self.engine.coverage(question, probes, user_id)
        coverage = {kb: round(score, 4) for (_, kb), score in zip(probes, scores, strict=True)}
        return max(coverage, key=lambda kb: coverage[kb]), coverage

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
        find_kb: bool = True,
    ) -> QueryAnswer:
        """``find_kb``: a book-wide question without ``kb`` goes to the visible knowledge base
        that covers it (``choose_kb``); off, to the textbook agent's (the textbook server's
        ``/api/query``, whose clients expect the book and its refusal)."""
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
        resolve = self.kb_visible
        if kb is not None and resolve is not None:
            stored = await run_sync(resolve, user_id, kb)
            if stored is None:
                raise ApiError(
                    404,
                    "knowledge_base_not_visible",
                    f"The knowledge base {kb!r} is not visible to this caller: it does not "
                    "exist or holds no document you may see.",
                )
            kb = stored
        mode = mode_for(context, use_context_only, chapter)
        coverage: dict[str, float] = {}
        if kb is None and mode == "book-wide" and find_kb:
            kb, coverage = await self.choose_kb(user_id, question)
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
            TurnRequest(
                question,
                user_id=user_id,
                conversation=ConversationState(conversation_id=f"query-{uuid.uuid4().hex}"),
                options=options,
            )
        )
        elapsed = round((time.perf_counter() - start) * 1000.0, 1)
        sources = [source_of(c) for c in result.citations]
        answered_from = kb or agent.knowledge_base
        name_of = self.kb_name
        if name_of is not None:  # the caller's names, never storage names

            def named() -> tuple[str | None, dict[str, float]]:
                own = name_of(user_id, answered_from) if answered_from else None
                return own, {name_of(user_id, k): v for k, v in coverage.items()}

            answered_from, coverage = await run_sync(named)
        return QueryAnswer(
            answer=result.reply,
            sources=sources,
            query_time_ms=elapsed,
            mode=mode,
            agent=result.agent,
            kb=answered_from,
            no_answer=result.no_answer,
            metadata=_retrieval_metadata(result.metadata, coverage),
        )


def _retrieval_metadata(metadata: TurnMetadata, coverage: dict[str, float]) -> dict[str, Any]:
    """How the answer was searched: the retrieval mode and the gate, when the agent searched;
    each candidate knowledge base's relevance when the question chose one."""
    out: dict[str, Any] = {"kb_coverage": coverage} if coverage else {}
    if metadata.retrieval is not None:
        out["retrieval"] = metadata.retrieval.to_json()
    if metadata.gate is not None:
        out["gate"] = metadata.gate.to_json()
    return out
