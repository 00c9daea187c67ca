"""Corrective-RAG nodes. Every model step has a heuristic counterpart it falls back to when the
model fails (``LLMError``), so a flaky model degrades answers, not availability. Thresholds are
``AgentSettings.corrective``."""

from __future__ import annotations

from statistics import fmean
from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.corrective_rag import prompts
from ragchat.agents.corrective_rag.state import CorrectiveState, GradedPassage
from ragchat.agents.corrective_rag.steps import CorrectiveSteps, GradeRequest, RewriteRequest, Said
from ragchat.agents.shared import answering
from ragchat.agents.shared.prompting import prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.wiring import AgentWiring
from ragchat.reader.decision import refused


def confidence(kept_scores: list[float]) -> float:
    """0.7 · mean relevance of the kept passages + 0.3 · min(kept / 3, 1)."""
    if not kept_scores:
        return 0.0
    return round(0.7 * fmean(kept_scores) + 0.3 * min(len(kept_scores) / 3, 1.0), 4)


class CorrectiveNodes:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.clock = wiring.clock
        self.tuning = wiring.tuning.corrective
        kb = wiring.app_config.knowledge_bases.get(agent.knowledge_base or "")
        topic = (kb.description if kb and kb.description else agent.description).rstrip(".")
        self.steps = CorrectiveSteps.build(wiring, agent, topic)
        self.compose = answering.composer(wiring, agent, self._p("SYSTEM", prompts.SYSTEM))

    def _p(self, key: str, default: str) -> str:
        return prompt(self.agent, key, default, description=self.agent.description)

    @timed("decide")
    async def decide(self, state: CorrectiveState) -> Update:
        turn = state.turn
        decision = await self.steps.decide.run(Said(turn.message, turn.history))
        query = decision.query.strip() or turn.message
        return {"decision": decision, "query": query, "question": query, "search_query": query}

    def after_decide(self, state: CorrectiveState) -> Literal["respond", "retrieve"]:
        assert state.decision is not None
        return "respond" if state.decision.action == "respond" else "retrieve"

    @timed("respond")
    async def respond(self, state: CorrectiveState) -> Update:
        reply = await self.steps.small_talk.run(Said(state.turn.message, state.turn.history))
        return {"reply": reply}

    @timed("retrieve")
    async def retrieve(self, state: CorrectiveState) -> Update:
        result = await answering.search(self.wiring, self.agent, state.query, state.turn)
        threshold = answering.gate_threshold(self.wiring, self.agent, state.turn)
        gate = answering.gate_info(result, threshold)
        return {"hits": result.hits, "gate": gate, "attempts": state.attempts + 1}

    @timed("grade")
    async def grade(self, state: CorrectiveState) -> Update:
        # Against the question, not the latest rewrite: a rewrite borrows words from the
        # passages it failed on, and graded against itself it would pass passages on another
        # topic (an out-of-scope question answered from whatever the rewrite drifted to).
        question = state.question or state.query
        scores: tuple[float, ...] = ()
        if state.hits:
            scores = await self.steps.grade.run(GradeRequest(question, tuple(state.hits)))
        gated = state.gate is not None and state.gate.no_answer
        kept = list(state.kept)
        kept_scores = dict(state.kept_scores)
        grades = list(state.grades or [])
        for hit, score in zip(state.hits, scores, strict=True):
            keep = score >= self.tuning.keep_grade and not gated
            cid = hit.chunk.chunk_id
            grades.append(GradedPassage(state.attempts, cid, round(score, 4), keep))
            if keep and cid not in kept_scores:
                kept.append(hit)
            if keep:
                kept_scores[cid] = max(score, kept_scores.get(cid, 0.0))
        return {"kept": kept, "kept_scores": kept_scores, "grades": grades}

    def after_grade(self, state: CorrectiveState) -> Literal["assess", "rewrite"]:
        scores = list(state.kept_scores.values())
        good = bool(scores) and fmean(scores) >= self.tuning.good_mean
        return "assess" if good or state.attempts >= self.tuning.max_attempts else "rewrite"

    @timed("rewrite")
    async def rewrite(self, state: CorrectiveState) -> Update:
        query = await self.steps.rewrite.run(RewriteRequest(state.query, tuple(state.hits)))
        return {"query": query, "rewritten_queries": [*(state.rewritten_queries or []), query]}

    @timed("assess")
    async def assess(self, state: CorrectiveState) -> Update:
        return {"confidence": confidence(list(state.kept_scores.values()))}

    def after_assess(self, state: CorrectiveState) -> Literal["generate", "insufficient"]:
        enough = (state.confidence or 0.0) >= self.tuning.answer_confidence
        return "generate" if enough else "insufficient"

    @timed("generate")
    async def generate(self, state: CorrectiveState) -> Update:
        hits = sorted(state.kept, key=lambda h: -state.kept_scores.get(h.chunk.chunk_id, 0.0))
        request = answering.AnswerRequest(
            question=state.turn.message,
            query=state.question or state.query,
            hits=tuple(hits),
            history=state.turn.history,
        )
        out = await answering.answer(self.compose, request, self.agent, self.wiring.stream)
        return out.update()

    @timed("insufficient")
    async def insufficient(self, state: CorrectiveState) -> Update:
        reply = self._p("INSUFFICIENT", prompts.INSUFFICIENT)
        self.wiring.stream.whole(reply)
        confidence = state.confidence or 0.0
        verdict = refused("confidence", confidence, self.tuning.answer_confidence)
        return answering.Answer(reply, [], True, verdict).update()
