"""Rag nodes. With a model, the model chooses the search query through the
``search_knowledge_base`` tool; if it answers without calling it, the message itself is
searched once, because an answer must come from the knowledge base."""

from __future__ import annotations

import logging
from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.rag import prompts
from ragchat.agents.rag.state import RagState
from ragchat.agents.shared import answering
from ragchat.agents.shared.llm import history_messages, prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.errors import LLMError
from ragchat.llm.base import Message
from ragchat.types import RetrievalResult

log = logging.getLogger(__name__)
MAX_TOOL_QUERIES = 3


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
    def __init__(self, deps: AgentDeps, agent: AgentConfig) -> None:
        self.deps = deps
        self.agent = agent

    async def _tool_queries(self, state: RagState) -> list[str]:
        assert self.deps.chat_model is not None
        system = prompt(self.agent, "TOOLS", prompts.TOOLS, description=self.agent.description)
        messages = [
            Message("system", system),
            *history_messages(state.history),
            Message("user", state.message),
        ]
        try:
            result = await self.deps.chat_model.generate(
                messages, options=self.deps.options("router"), tools=[prompts.SEARCH_TOOL]
            )
        except LLMError as exc:
            log.warning(
                "agent %s: tool call failed (%s); searching the message", self.agent.name, exc
            )
            return []
        calls = [c for c in result.tool_calls if c.name == prompts.SEARCH_TOOL.name]
        queries = [str(c.arguments.get("query") or "").strip() for c in calls]
        return [q for q in queries if q][:MAX_TOOL_QUERIES]

    @timed("retrieve")
    async def retrieve(self, state: RagState) -> Update:
        options = state.options
        mode = answering.retrieval_mode(self.agent, options)
        tool_queries: list[str] = []
        if self.deps.chat_model is not None and mode != "selected_text":
            tool_queries = await self._tool_queries(state)
        queries = tool_queries or [answering.standalone_query(state.message, state.history)]
        results = [
            await answering.search(self.deps, self.agent, q, options, state.user_id)
            for q in queries
        ]
        result = merge_results(results)
        threshold = self.deps.retriever(self.agent, options.get("kb")).config.gate_threshold
        gate = answering.gate_metadata(result, None if mode == "selected_text" else threshold)
        retrieval = {"mode": mode, "query": queries[0], "tool_queries": tool_queries}
        if options.get("chapter") and mode == "chapter":
            retrieval["chapter"] = str(options["chapter"])
        return {
            "query": queries[0],
            "hits": result.hits,
            "gate": gate,
            "metadata": {"retrieval": retrieval, "gate": gate, "search_query": queries[0]},
        }

    def after_retrieve(self, state: RagState) -> Literal["refuse", "answer"]:
        return "refuse" if state.gate.get("no_answer") or not state.hits else "answer"

    @timed("refuse")
    async def refuse(self, state: RagState) -> Update:
        out = answering.refuse(self.agent)
        return {"reply": out.reply, "citations": [], "no_answer": True}

    @timed("answer")
    async def answer(self, state: RagState) -> Update:
        system = prompt(self.agent, "SYSTEM", prompts.SYSTEM, description=self.agent.description)
        out = await answering.answer(
            self.deps,
            self.agent,
            question=state.message,
            query=state.query,
            hits=state.hits,
            history=state.history,
            system=system,
            selected_text=answering.retrieval_mode(self.agent, state.options) == "selected_text",
        )
        return {"reply": out.reply, "citations": out.citations, "no_answer": out.no_answer}
