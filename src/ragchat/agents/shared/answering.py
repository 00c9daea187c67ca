"""Retrieval and grounded answering shared by the knowledge-base agents (rag,
corrective_rag, conversational_rag): one place decides how options map to a search and how
an answer cites its sources, so every agent cites the same way."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.heuristics import compose_answer, is_follow_up, reformulate
from ragchat.agents.heuristics.compose import MIN_SENTENCE_SCORE
from ragchat.agents.shared.llm import emit, history_messages, stream_answer
from ragchat.llm.base import Message
from ragchat.types import Citation, HistoryMessage, Hit, RetrievalResult, citation_from_hit

_CITE = re.compile(r"\[(\d{1,2})\]")
PASSAGE_CHARS = 1500


@dataclass
class Answer:
    reply: str
    citations: list[Citation] = field(default_factory=list)
    no_answer: bool = False


def standalone_query(message: str, history: Sequence[HistoryMessage]) -> str:
    """Offline follow-up resolution ("what are its side effects?" → names the subject)."""
    return reformulate(message, history) if is_follow_up(message, history) else message


async def search(
    deps: AgentDeps, agent: AgentConfig, query: str, options: dict[str, Any], user_id: str
) -> RetrievalResult:
    """``_search`` in a worker thread: embedding and scoring are CPU work that would otherwise
    hold the engine's event loop, and with it every other turn in flight (their routing, their
    streamed tokens). Measured in ``benchmarks/bench_concurrency.py``."""
    return await asyncio.to_thread(_search, deps, agent, query, options, user_id)


def _search(
    deps: AgentDeps, agent: AgentConfig, query: str, options: dict[str, Any], user_id: str
) -> RetrievalResult:
    """Book-wide, chapter-aware (``options["chapter"]``) or selected-text-only
    (``options["selected_text"]``: that passage is the only context) retrieval over the
    documents ``user_id`` may see; the chapter and selection modes apply only to agents with
    ``textbook_modes``."""
    retriever = deps.retriever(agent, options.get("kb"))
    selected = options.get("selected_text")
    if agent.textbook_modes and selected and str(selected).strip():
        return retriever.retrieve_from_text(query, str(selected))
    chapter = options.get("chapter")
    filters: dict[str, Any] = deps.visibility(agent, options.get("kb"), user_id)
    if agent.textbook_modes and chapter:
        filters["chapter"] = str(chapter)
    return retriever.retrieve(query, top_k=options.get("top_k"), filters=filters or None)


def retrieval_mode(agent: AgentConfig, options: dict[str, Any]) -> str:
    if agent.textbook_modes and options.get("selected_text"):
        return "selected_text"
    if agent.textbook_modes and options.get("chapter"):
        return "chapter"
    return "book" if agent.textbook_modes else "knowledge_base"


def gate_metadata(result: RetrievalResult, threshold: float | None) -> dict[str, Any]:
    return {
        "no_answer": result.no_answer,
        "relevance": round(result.relevance, 4),
        "threshold": threshold,
        "hits": len(result.hits),
        "chunk_ids": [h.chunk.chunk_id for h in result.hits],
        "notes": list(result.notes),
    }


def sources_block(hits: Sequence[Hit]) -> str:
    parts = []
    for i, hit in enumerate(hits, 1):
        md = hit.chunk.metadata
        title = md.get("doc_title") or md.get("title") or hit.chunk.source
        where = hit.chunk.location()
        text = " ".join((hit.context or hit.chunk.text).split())[:PASSAGE_CHARS]
        parts.append(f"[{i}] {title}" + (f" — {where}" if where else "") + f"\n{text}")
    return "\n\n".join(parts)


def cited(text: str, hits: Sequence[Hit]) -> list[Citation]:
    """Citations for the ``[n]`` markers in ``text``; every passage when none is marked."""
    numbers = sorted({int(n) for n in _CITE.findall(text) if 1 <= int(n) <= len(hits)})
    numbers = numbers or list(range(1, len(hits) + 1))
    return [citation_from_hit(hits[n - 1], n) for n in numbers]


def refuse(agent: AgentConfig) -> Answer:
    emit(agent.no_answer_message)
    return Answer(agent.no_answer_message, [], True)


async def answer(
    deps: AgentDeps,
    agent: AgentConfig,
    *,
    question: str,
    query: str,
    hits: Sequence[Hit],
    history: Sequence[HistoryMessage],
    system: str,
    selected_text: bool = False,
) -> Answer:
    """A grounded answer citing ``hits`` as [n], with the agent's disclaimer. Offline: the
    extractive ``compose_answer``; with a model: streamed, and NO_ANSWER becomes the agent's
    no-answer message."""
    if not hits:
        return refuse(agent)
    if deps.chat_model is None:
        composed = await asyncio.to_thread(  # CPU work (sentence embeddings): see ``search``
            compose_answer,
            query,
            list(hits),
            deps.embedder,
            disclaimer=agent.disclaimer,
            no_answer_message=agent.no_answer_message,
            # The caller chose the passage: quote its best sentences rather than refuse.
            require_topic=not selected_text,
            min_sentence_score=0.0 if selected_text else MIN_SENTENCE_SCORE,
        )
        emit(composed.text)
        return Answer(composed.text, list(composed.citations), composed.no_answer)
    user = f"Sources:\n\n{sources_block(hits)}\n\nQuestion: {question}"
    if query.strip() != question.strip():
        user += f"\n(Standalone form: {query})"
    messages = [Message("system", system), *history_messages(history), Message("user", user)]
    text = await stream_answer(deps.chat_model, messages, deps.options("answer"))
    if text is None:
        return refuse(agent)
    citations = cited(text, hits)
    if agent.disclaimer:
        tail = f"\n\n{agent.disclaimer}"
        emit(tail)
        text += tail
    return Answer(text, citations, False)
