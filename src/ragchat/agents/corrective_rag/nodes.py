"""Corrective-RAG nodes. Every model step has an offline counterpart, and a model step that
fails (``LLMError``) falls back to it, so a flaky model degrades answers, not availability."""

from __future__ import annotations

import logging
import re
from statistics import fmean
from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.corrective_rag import prompts
from ragchat.agents.corrective_rag.state import CorrectiveState, Decision, Grades
from ragchat.agents.deps import AgentDeps
from ragchat.agents.heuristics import grade_documents, rewrite_query
from ragchat.agents.shared import answering
from ragchat.agents.shared.llm import emit, history_messages, history_text, prompt, stream_reply
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.errors import LLMError, LLMOutputError
from ragchat.llm.base import Message
from ragchat.types import Hit

log = logging.getLogger(__name__)

KEEP = 0.5  # a passage graded at least this is kept as evidence
GOOD_MEAN = 0.6  # mean grade of kept passages that needs no retry
MAX_ATTEMPTS = 2
ANSWER_CONFIDENCE = 0.6
_GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening)|howdy)\b[\s\w,!.]{0,20}$", re.I
)
_THANKS = re.compile(
    r"^\s*(thanks|thank you|thx|cheers|great,? thanks|ok,? thanks)\b.{0,30}$", re.I
)


def smalltalk(message: str) -> Literal["greeting", "thanks"] | None:
    if "?" in message:
        return None
    if _THANKS.match(message):
        return "thanks"
    return "greeting" if _GREETING.match(message) else None


def confidence(kept_scores: list[float]) -> float:
    """0.7 · mean relevance of the kept passages + 0.3 · min(kept / 3, 1)."""
    if not kept_scores:
        return 0.0
    return round(0.7 * fmean(kept_scores) + 0.3 * min(len(kept_scores) / 3, 1.0), 4)


class CorrectiveNodes:
    def __init__(self, deps: AgentDeps, agent: AgentConfig) -> None:
        self.deps = deps
        self.agent = agent
        kb = deps.app_config.knowledge_bases.get(agent.knowledge_base or "")
        self.topic = (kb.description if kb and kb.description else agent.description).rstrip(".")

    def _p(self, key: str, default: str) -> str:
        return prompt(self.agent, key, default, description=self.agent.description)

    @timed("decide")
    async def decide(self, state: CorrectiveState) -> Update:
        kind = smalltalk(state.message)
        decision = Decision(
            action="respond" if kind else "retrieve",
            query=answering.standalone_query(state.message, state.history),
            reasoning=f"offline: {kind or 'question'}",
        )
        if self.deps.chat_model is not None:
            messages = [
                Message("system", self._p("DECIDE", prompts.DECIDE)),
                Message(
                    "user",
                    f"Conversation:\n{history_text(state.history)}\n\n"
                    f"Latest message: {state.message}",
                ),
            ]
            try:
                decision = await self.deps.chat_model.structured(
                    messages, Decision, options=self.deps.options("router")
                )
            except LLMError as exc:
                log.warning("agent %s: decide failed (%s); offline rule", self.agent.name, exc)
        query = decision.query.strip() or state.message
        return {
            "action": decision.action,
            "query": query,
            "question": query,
            "metadata": {
                "decision": {"action": decision.action, "reasoning": decision.reasoning},
                "search_query": query,
                "retrieval_attempts": 0,
            },
        }

    def after_decide(self, state: CorrectiveState) -> Literal["respond", "retrieve"]:
        return "respond" if state.action == "respond" else "retrieve"

    @timed("respond")
    async def respond(self, state: CorrectiveState) -> Update:
        if self.deps.chat_model is None:
            template = prompts.THANKS if smalltalk(state.message) == "thanks" else prompts.GREETING
            reply = template.replace("{topic}", self.topic[:1].lower() + self.topic[1:])
            emit(reply)
        else:
            messages = [
                Message("system", self._p("RESPOND", prompts.RESPOND)),
                *history_messages(state.history),
                Message("user", state.message),
            ]
            reply = await stream_reply(self.deps.chat_model, messages, self.deps.options("answer"))
        return {"reply": reply}

    @timed("retrieve")
    async def retrieve(self, state: CorrectiveState) -> Update:
        result = await answering.search(
            self.deps, self.agent, state.query, state.options, state.user_id
        )
        threshold = self.deps.retriever(self.agent, state.options.get("kb")).config.gate_threshold
        gate = answering.gate_metadata(result, threshold)
        return {
            "hits": result.hits,
            "gate": gate,
            "attempts": state.attempts + 1,
            "metadata": {"gate": gate, "retrieval_attempts": state.attempts + 1},
        }

    async def _grade(self, query: str, hits: list[Hit]) -> list[float]:
        if self.deps.chat_model is not None:
            passages = answering.sources_block(hits)
            messages = [
                Message("system", self._p("GRADE", prompts.GRADE)),
                Message("user", f"Question: {query}\n\nPassages:\n\n{passages}"),
            ]
            try:
                graded = await self.deps.chat_model.structured(
                    messages, Grades, options=self.deps.options("router")
                )
                if len(graded.scores) != len(hits):
                    raise LLMOutputError(f"{len(graded.scores)} grades for {len(hits)} passages")
                return [min(max(float(s), 0.0), 1.0) for s in graded.scores]
            except LLMError as exc:
                log.warning("agent %s: grading failed (%s); offline", self.agent.name, exc)
        return [float(s) for s in grade_documents(hits, query)]

    @timed("grade")
    async def grade(self, state: CorrectiveState) -> Update:
        # Against the question, not the latest rewrite: a rewrite borrows words from the
        # passages it failed on, and graded against itself it would pass passages on another
        # topic (an out-of-scope question answered from whatever the rewrite drifted to).
        question = state.question or state.query
        scores = await self._grade(question, state.hits) if state.hits else []
        gated = bool(state.gate.get("no_answer"))
        kept = list(state.kept)
        kept_scores = dict(state.kept_scores)
        grades = list(state.grades)
        for hit, score in zip(state.hits, scores, strict=True):
            keep = score >= KEEP and not gated
            cid = hit.chunk.chunk_id
            grades.append(
                {"attempt": state.attempts, "chunk_id": cid, "score": round(score, 4), "kept": keep}
            )
            if keep and cid not in kept_scores:
                kept.append(hit)
            if keep:
                kept_scores[cid] = max(score, kept_scores.get(cid, 0.0))
        return {
            "kept": kept,
            "kept_scores": kept_scores,
            "grades": grades,
            "metadata": {"grades": grades},
        }

    def after_grade(self, state: CorrectiveState) -> Literal["assess", "rewrite"]:
        scores = list(state.kept_scores.values())
        good = bool(scores) and fmean(scores) >= GOOD_MEAN
        return "assess" if good or state.attempts >= MAX_ATTEMPTS else "rewrite"

    @timed("rewrite")
    async def rewrite(self, state: CorrectiveState) -> Update:
        query = ""
        if self.deps.chat_model is not None:
            messages = [
                Message("system", self._p("REWRITE", prompts.REWRITE)),
                Message("user", f"Query: {state.query}"),
            ]
            try:
                result = await self.deps.chat_model.generate(
                    messages, options=self.deps.options("router")
                )
                lines = result.content.strip().strip('"').splitlines()
                query = lines[0].strip() if lines else ""
            except LLMError as exc:
                log.warning("agent %s: rewrite failed (%s); offline", self.agent.name, exc)
        query = query or rewrite_query(state.query, state.hits)
        rewritten = [*state.rewritten_queries, query]
        return {
            "query": query,
            "rewritten_queries": rewritten,
            "metadata": {"rewritten_queries": rewritten},
        }

    @timed("assess")
    async def assess(self, state: CorrectiveState) -> Update:
        value = confidence(list(state.kept_scores.values()))
        return {"confidence": value, "metadata": {"confidence": value}}

    def after_assess(self, state: CorrectiveState) -> Literal["generate", "insufficient"]:
        return "generate" if state.confidence >= ANSWER_CONFIDENCE else "insufficient"

    @timed("generate")
    async def generate(self, state: CorrectiveState) -> Update:
        hits = sorted(state.kept, key=lambda h: -state.kept_scores.get(h.chunk.chunk_id, 0.0))
        out = await answering.answer(
            self.deps,
            self.agent,
            question=state.message,
            query=state.question or state.query,
            hits=hits,
            history=state.history,
            system=self._p("SYSTEM", prompts.SYSTEM),
        )
        return {"reply": out.reply, "citations": out.citations, "no_answer": out.no_answer}

    @timed("insufficient")
    async def insufficient(self, state: CorrectiveState) -> Update:
        reply = self._p("INSUFFICIENT", prompts.INSUFFICIENT)
        emit(reply)
        return {"reply": reply, "citations": [], "no_answer": True}
