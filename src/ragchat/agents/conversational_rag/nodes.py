"""Conversational-RAG nodes. The reformulated query is what is classified and searched, so a
follow-up ("and for a three-year-old?") is handled like the full question."""

from __future__ import annotations

from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.conversational_rag import prompts
from ragchat.agents.conversational_rag.state import CLARIFICATION, ConversationalState
from ragchat.agents.conversational_rag.steps import ConversationalSteps, Said
from ragchat.agents.shared import answering
from ragchat.agents.shared.prompting import prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.wiring import AgentWiring


class ConversationalNodes:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.clock = wiring.clock
        self.steps = ConversationalSteps.build(wiring, agent)
        system = prompt(agent, "SYSTEM", prompts.SYSTEM, description=agent.description)
        self.compose = answering.composer(wiring, agent, system)

    @timed("reformulate")
    async def reformulate(self, state: ConversationalState) -> Update:
        turn = state.turn
        found = await self.steps.reformulate.run(Said(turn.message, turn.history))
        return {"query": found.query, "search_query": found.query, "searched": found.search}

    @timed("classify")
    async def classify(self, state: ConversationalState) -> Update:
        intent = await self.steps.classify.run(Said(state.query, state.turn.history))
        return {"intent": intent}

    def after_classify(
        self, state: ConversationalState
    ) -> Literal["retrieve", "clarify", "template"]:
        assert state.intent is not None
        if state.intent.intent == CLARIFICATION:
            return "clarify" if self.agent.clarify_below is None else "retrieve"
        return "template" if state.intent.intent in self.agent.intents else "retrieve"

    @timed("clarify")
    async def clarify(self, state: ConversationalState) -> Update:
        reply = await self.steps.clarify.run(Said(state.query, state.turn.history))
        return {"reply": reply, "clarified": True}

    @timed("template")
    async def template(self, state: ConversationalState) -> Update:
        assert state.intent is not None
        name = state.intent.intent
        reply = self.agent.intents[name].response
        self.wiring.stream.whole(reply)
        return {"reply": reply, "template": name}

    @timed("retrieve")
    async def retrieve(self, state: ConversationalState) -> Update:
        searched = state.searched or state.query
        result = await answering.search(self.wiring, self.agent, searched, state.turn)
        threshold = answering.gate_threshold(self.wiring, self.agent, state.turn)
        return {"hits": result.hits, "gate": answering.gate_info(result, threshold)}

    def after_retrieve(
        self, state: ConversationalState
    ) -> Literal["refuse", "generate", "clarify"]:
        refused = state.gate is not None and state.gate.no_answer
        if state.intent is not None and state.intent.intent == CLARIFICATION:
            floor = self.agent.clarify_below or 0.0
            clear = state.gate is not None and state.gate.relevance >= floor
            return "generate" if clear and not refused and state.hits else "clarify"
        return "refuse" if refused or not state.hits else "generate"

    @timed("refuse")
    async def refuse(self, state: ConversationalState) -> Update:
        return answering.refuse_after_search(self.agent, self.wiring.stream, state.gate).update()

    @timed("generate")
    async def generate(self, state: ConversationalState) -> Update:
        request = answering.AnswerRequest(
            question=state.turn.message,
            query=state.query,
            hits=tuple(state.hits),
            history=state.turn.history,
        )
        out = await answering.answer(self.compose, request, self.agent, self.wiring.stream)
        return out.update()
