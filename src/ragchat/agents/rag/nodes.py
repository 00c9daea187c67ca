"""Rag nodes. The search query is the model's (through the ``search_knowledge_base`` tool) or,
when there is none, the message's standalone form: an answer must come from the knowledge
base, so the knowledge base is always searched."""

from __future__ import annotations

from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.metadata import RetrievalInfo
from ragchat.agents.rag import prompts
from ragchat.agents.rag.state import RagState
from ragchat.agents.rag.steps import PlanRequest, search_planner
from ragchat.agents.shared import answering
from ragchat.agents.shared.prompting import prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.wiring import AgentWiring
from ragchat.types import RetrievalResult


def merge_results(results: list[RetrievalResult]) -> RetrievalResult:
    """Several tool searches as one: hits in order, deduplicated; refused only if all were."""
    first = results[0]
    seen: set[str] = set()
    hits = []
    for result in results:
        for hit in result.hits if not result.no_answer else ():
            if hit.chunk.chunk_id not in seen:
                seen.add(hit.chunk.chunk_id)
                hits.append(hit)
    if len(results) == 1:
        return first
    return RetrievalResult(
        query=" | ".join(r.query for r in results),
        hits=hits or first.hits,
        no_answer=all(r.no_answer for r in results),
        relevance=max(r.relevance for r in results),
        mode=first.mode,
        notes=[n for r in results for n in r.notes],
    )


class RagNodes:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.clock = wiring.clock
        self.plan = search_planner(wiring, agent)
        system = prompt(agent, "SYSTEM", prompts.SYSTEM, description=agent.description)
        self.compose = answering.composer(wiring, agent, system)

    @timed("retrieve")
    async def retrieve(self, state: RagState) -> Update:
        turn = state.turn
        mode = answering.retrieval_mode(self.agent, turn)
        tool_queries: tuple[str, ...] = ()
        if mode != "selected_text":
            tool_queries = await self.plan.run(PlanRequest(turn.message, turn.history))
        queries = list(tool_queries) or [answering.standalone_query(turn.message, turn.history)]
        results = [await answering.search(self.wiring, self.agent, q, turn) for q in queries]
        result = merge_results(results)
        threshold = answering.gate_threshold(self.wiring, self.agent, turn)
        gate = answering.gate_info(result, None if mode == "selected_text" else threshold)
        chapter = turn.options.chapter if mode == "chapter" else None
        return {
            "query": queries[0],
            "hits": result.hits,
            "gate": gate,
            "retrieval": RetrievalInfo(mode, queries[0], tool_queries, chapter),
            "search_query": queries[0],
        }

    def after_retrieve(self, state: RagState) -> Literal["refuse", "answer"]:
        refused = state.gate is not None and state.gate.no_answer
        return "refuse" if refused or not state.hits else "answer"

    @timed("refuse")
    async def refuse(self, state: RagState) -> Update:
        return answering.refuse_after_search(self.agent, self.wiring.stream, state.gate).update()

    @timed("answer")
    async def answer(self, state: RagState) -> Update:
        turn = state.turn
        request = answering.AnswerRequest(
            question=turn.message,
            query=state.query,
            hits=tuple(state.hits),
            history=turn.history,
            selected_text=answering.retrieval_mode(self.agent, turn) == "selected_text",
        )
        out = await answering.answer(self.compose, request, self.agent, self.wiring.stream)
        return out.update()
