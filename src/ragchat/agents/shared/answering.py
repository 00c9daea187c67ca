"""Retrieval and grounded answering shared by the knowledge-base agents (rag, corrective_rag,
conversational_rag): one place decides how turn options map to a search and how an answer
cites its sources, so every agent cites the same way.

Composing the answer is a step (``shared/steps.py``): the model writes it, streamed, from the
numbered passages; the heuristic quotes and cites their best sentences (``compose_answer``)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragchat.agents.config import AgentConfig
from ragchat.agents.heuristics import compose_answer, is_follow_up, reformulate
from ragchat.agents.heuristics.compose import MIN_SENTENCE_SCORE
from ragchat.agents.metadata import GateInfo, RetrievalMode
from ragchat.agents.shared.prompting import history_messages
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.shared.streaming import Streamer
from ragchat.agents.types import Turn
from ragchat.agents.wiring import AgentWiring
from ragchat.embed.base import Embedder
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.reader.compose import Ranked
from ragchat.reader.compose import answer as read_answer
from ragchat.reader.compose import rank as rank_passages
from ragchat.reader.model import ReaderModel, shipped
from ragchat.safety.delimit import DOCUMENTS_INSTRUCTION, neutralise
from ragchat.safety.passages import screen_passage
from ragchat.types import Citation, HistoryMessage, Hit, RetrievalResult, citation_from_hit

_CITE = re.compile(r"\[(\d{1,2})\]")


@dataclass(frozen=True)
class Answer:
    reply: str
    citations: list[Citation] = field(default_factory=list)
    no_answer: bool = False


@dataclass(frozen=True)
class AnswerRequest:
    question: str  # what the user asked
    query: str  # its standalone form (what was searched)
    hits: tuple[Hit, ...]
    history: tuple[HistoryMessage, ...] = ()
    selected_text: bool = False  # the caller chose the passage: quote it rather than refuse


Composer = Step[AnswerRequest, Answer]


def standalone_query(message: str, history: Sequence[HistoryMessage]) -> str:
    """Heuristic follow-up resolution ("what are its side effects?" → names the subject); it
    seeds the search query with or without a model."""
    return reformulate(message, history) if is_follow_up(message, history) else message


FOLLOW_UP_CONTEXT = 2  # earlier user messages searched with a follow-up


def follow_up_search(message: str, history: Sequence[HistoryMessage]) -> str:
    """What to search for a follow-up without a model: the message and the person's last
    ``FOLLOW_UP_CONTEXT`` messages, most recent first. On the corpus's conversations this
    found the answer for 90% of follow-ups (train) against 83% for the rewritten question
    alone, whose word substitutions misfire ("and a glass of wine with dinner?" → "lemons a
    glass of wine …"); the reader still reads the rewritten question."""
    if not is_follow_up(message, history):
        return message
    earlier = [m.content for m in history if m.role == "user"][-FOLLOW_UP_CONTEXT:]
    return " ".join([message, *reversed(earlier)])


async def search(
    wiring: AgentWiring, agent: AgentConfig, query: str, turn: Turn
) -> RetrievalResult:
    """``_search`` in a worker thread: embedding and scoring are CPU work that would otherwise
    hold the engine's event loop, and with it every other turn in flight (their routing, their
    streamed tokens). Measured in ``benchmarks/bench_concurrency.py``."""
    return await asyncio.to_thread(_search, wiring, agent, query, turn)


def _search(wiring: AgentWiring, agent: AgentConfig, query: str, turn: Turn) -> RetrievalResult:
    """Book-wide, chapter-aware (``options.chapter``) or selected-text-only
    (``options.selected_text``: that passage is the only context) retrieval over the documents
    the turn's user may see; the chapter and selection modes apply only to agents with
    ``textbook_modes``. A conversation bound to several knowledge bases searches each and
    merges the results (``merge_results``)."""
    options = turn.options
    names = options.searched
    if len(names) <= 1:
        return _search_one(wiring, agent, query, turn, names[0] if names else None)
    return merge_results([_search_one(wiring, agent, query, turn, name) for name in names])


def _search_one(
    wiring: AgentWiring, agent: AgentConfig, query: str, turn: Turn, kb: str | None
) -> RetrievalResult:
    options = turn.options
    knowledge = wiring.knowledge
    try:
        retriever = knowledge.retriever(agent, kb)
    except KnowledgeBaseNotFound:
        if not options.kbs:
            raise
        # A knowledge base of the user's that holds no document yet (or was just deleted):
        # nothing to answer from, which is a refusal, not an error.
        note = f"knowledge base {kb!r} has no documents yet"
        return RetrievalResult(query=query, hits=[], no_answer=True, notes=[note])
    selected = options.selected_text
    if agent.textbook_modes and selected and selected.strip():
        return retriever.retrieve_from_text(query, selected)
    filters: dict[str, Any] = dict(knowledge.visibility(agent, kb, turn.user_id))
    if agent.textbook_modes and options.chapter:
        filters["chapter"] = options.chapter
    # The turn's message is embedded once (``Turn.embedding``); a rewritten query is not it.
    vector = turn.embedding(retriever.kb.embedder) if query == turn.message else None
    result = retriever.retrieve(
        query, top_k=options.top_k, filters=filters or None, query_vector=vector
    )
    return knowledge.as_seen_by(agent, kb, turn.user_id, result)


def _comparable(hit: Hit) -> float:
    """A score that means the same in every knowledge base: the cross-encoder's when there is
    one, else the dense cosine (fused scores are normalised per result list)."""
    scores = hit.scores
    return float(scores.get("rerank", scores.get("dense", hit.score)))


def merge_results(results: Sequence[RetrievalResult]) -> RetrievalResult:
    """One result from several knowledge bases' results for the same query: the passages of
    those that passed their relevance gate, best first by a comparable score, as many as the
    longest list held; NO_ANSWER only when every one refused."""
    answered = [r for r in results if r.hits and not r.no_answer]
    if not answered:
        return max(results, key=lambda r: r.relevance)
    hits = sorted((h for r in answered for h in r.hits), key=_comparable, reverse=True)
    timings: dict[str, float] = {}
    for r in results:
        for step, ms in r.timings.items():
            timings[step] = round(timings.get(step, 0.0) + ms, 3)
    best = max(answered, key=lambda r: r.relevance)
    return replace(
        best,
        hits=hits[: max(len(r.hits) for r in answered)],
        relevance=best.relevance,
        expanded_queries=[q for r in results for q in r.expanded_queries],
        timings=timings,
        notes=[n for r in results for n in r.notes],
    )


def gate_threshold(wiring: AgentWiring, agent: AgentConfig, turn: Turn) -> float | None:
    names = turn.options.searched
    try:
        return wiring.knowledge.retriever(agent, names[0] if names else None).config.gate_threshold
    except KnowledgeBaseNotFound:
        return agent.retrieval_settings(wiring.settings.retrieval).gate_threshold


def retrieval_mode(agent: AgentConfig, turn: Turn) -> RetrievalMode:
    if agent.textbook_modes and turn.options.selected_text:
        return "selected_text"
    if agent.textbook_modes and turn.options.chapter:
        return "chapter"
    return "book" if agent.textbook_modes else "knowledge_base"


def gate_info(result: RetrievalResult, threshold: float | None) -> GateInfo:
    return GateInfo(
        no_answer=result.no_answer,
        relevance=round(result.relevance, 4),
        threshold=threshold,
        hits=len(result.hits),
        chunk_ids=tuple(h.chunk.chunk_id for h in result.hits),
        notes=tuple(result.notes),
    )


def sources_block(hits: Sequence[Hit], passage_chars: int) -> str:
    """The numbered passages as the model reads them: reference data, never instructions.
    Each passage is screened (sentences addressed to the model removed, ``screen_passage``)
    and cannot open or close a document block (``neutralise``)."""
    parts = [DOCUMENTS_INSTRUCTION]
    for i, hit in enumerate(hits, 1):
        md = hit.chunk.metadata
        title = md.get("doc_title") or md.get("title") or hit.chunk.source
        where = hit.chunk.location()
        screened = screen_passage(hit.context or hit.chunk.text).text
        text = neutralise(" ".join(screened.split())[:passage_chars])
        parts.append(f"[{i}] {title}" + (f" — {where}" if where else "") + f"\n{text}")
    return "\n\n".join(parts)


def cited(text: str, hits: Sequence[Hit]) -> list[Citation]:
    """Citations for the ``[n]`` markers in ``text``; every passage when none is marked."""
    numbers = sorted({int(n) for n in _CITE.findall(text) if 1 <= int(n) <= len(hits)})
    numbers = numbers or list(range(1, len(hits) + 1))
    return [citation_from_hit(hits[n - 1], n) for n in numbers]


def refuse(agent: AgentConfig, stream: Streamer) -> Answer:
    stream.whole(agent.no_answer_message)
    return Answer(agent.no_answer_message, [], True)


async def answer(
    composer: Composer, request: AnswerRequest, agent: AgentConfig, stream: Streamer
) -> Answer:
    """A grounded answer citing ``request.hits`` as [n]; the agent's no-answer message when
    there is nothing to cite."""
    if not request.hits:
        return refuse(agent, stream)
    return await composer.run(request)


def trained_reader(wiring: AgentWiring) -> ReaderModel | None:
    """The reader model the settings choose (``None``: the hand-written rules decide)."""
    tuning = wiring.tuning
    if tuning.reader != "trained":
        return None
    return shipped(tuning.reader_model) if tuning.reader_model else shipped()


class ModelComposer:
    """The model answers from the numbered passages, streamed; NO_ANSWER becomes the agent's
    no-answer message; the agent's disclaimer is appended."""

    def __init__(
        self,
        model: ChatModel,
        agent: AgentConfig,
        system: str,
        wiring: AgentWiring,
    ) -> None:
        self.model = model
        self.agent = agent
        self.system = system
        self.stream = wiring.stream
        self.options: GenerationOptions = wiring.options("answer")
        self.history = wiring.tuning.model_history_messages
        self.passage_chars = wiring.tuning.passage_chars
        self.embedder = wiring.embedder
        self.reader = trained_reader(wiring)

    async def run(self, request: AnswerRequest) -> Answer:
        if self.reader is not None:
            # The reader decides whether the model is asked at all and orders what it reads.
            ranked = await asyncio.to_thread(self._rank, request)
            if not ranked.answers and not request.selected_text:
                return refuse(self.agent, self.stream)
            request = replace(request, hits=ranked.hits)
        user = f"Sources:\n\n{sources_block(request.hits, self.passage_chars)}\n\n"
        user += f"Question: {request.question}"
        if request.query.strip() != request.question.strip():
            user += f"\n(Standalone form: {request.query})"
        messages = [
            Message("system", self.system),
            *history_messages(request.history, self.history),
            Message("user", user),
        ]
        text = await self.stream.answer(self.model, messages, self.options, private=self.system)
        if text is None:
            return refuse(self.agent, self.stream)
        citations = cited(text, request.hits)
        if self.agent.disclaimer:
            tail = f"\n\n{self.agent.disclaimer}"
            self.stream.whole(tail)
            text += tail
        return Answer(text, citations, False)

    def _rank(self, request: AnswerRequest) -> Ranked:
        assert self.reader is not None
        previous = next((m.content for m in reversed(request.history) if m.role == "user"), "")
        return rank_passages(
            request.query, request.hits, self.embedder, self.reader,
            message=request.question, previous=previous,
        )  # fmt: skip


class ExtractiveComposer:
    """The heuristic: the passages' best sentences, quoted and cited — chosen by the trained
    reader (``ragchat.reader``), or by the hand-written rules (``compose_answer``)."""

    def __init__(
        self,
        embedder: Embedder,
        agent: AgentConfig,
        stream: Streamer,
        model: ReaderModel | None,
    ) -> None:
        self.embedder = embedder
        self.agent = agent
        self.stream = stream
        self.model = model

    async def run(self, request: AnswerRequest) -> Answer:
        if self.model is not None:
            return await asyncio.to_thread(self._read, request)
        composed = await asyncio.to_thread(  # CPU work (sentence embeddings): see ``search``
            compose_answer,
            request.query,
            list(request.hits),
            self.embedder,
            disclaimer=self.agent.disclaimer,
            no_answer_message=self.agent.no_answer_message,
            require_topic=not request.selected_text,
            min_sentence_score=0.0 if request.selected_text else MIN_SENTENCE_SCORE,
        )
        self.stream.whole(composed.text)
        return Answer(composed.text, list(composed.citations), composed.no_answer)

    def _read(self, request: AnswerRequest) -> Answer:
        assert self.model is not None
        previous = next((m.content for m in reversed(request.history) if m.role == "user"), "")
        out = read_answer(
            request.query,
            list(request.hits),
            self.embedder,
            self.model,
            message=request.question,
            previous=previous,
            no_answer_message=self.agent.no_answer_message,
            disclaimer=self.agent.disclaimer,
            require_answerable=not request.selected_text,
        )
        self.stream.whole(out.text)
        return Answer(out.text, list(out.citations), out.no_answer)


def composer(wiring: AgentWiring, agent: AgentConfig, system: str) -> Composer:
    return choose(
        wiring.label(agent, "answer"),
        wiring.chat_model,
        lambda model: ModelComposer(model, agent, system, wiring),
        ExtractiveComposer(wiring.embedder, agent, wiring.stream, trained_reader(wiring)),
    )
