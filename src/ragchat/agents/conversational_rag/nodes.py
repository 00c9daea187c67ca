"""Conversational-RAG nodes. The reformulated query is what is classified and searched, so a
follow-up ("and for a three-year-old?") is handled like the full question."""

from __future__ import annotations

import logging
from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.conversational_rag import prompts
from ragchat.agents.conversational_rag.state import (
    CLARIFICATION,
    INFORMATION,
    ConversationalState,
    IntentChoice,
)
from ragchat.agents.deps import AgentDeps
from ragchat.agents.heuristics import IntentClassifier, clarifying_question
from ragchat.agents.shared import answering
from ragchat.agents.shared.llm import emit, history_text, prompt, stream_reply
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.errors import LLMError, LLMOutputError
from ragchat.llm.base import Message

log = logging.getLogger(__name__)


class ConversationalNodes:
    def __init__(self, deps: AgentDeps, agent: AgentConfig) -> None:
        self.deps = deps
        self.agent = agent
        self._classifier: IntentClassifier | None = None

    def _p(self, key: str, default: str, **values: str) -> str:
        return prompt(self.agent, key, default, description=self.agent.description, **values)

    @property
    def classifier(self) -> IntentClassifier:
        if self._classifier is None:  # embeds the intent examples once, on first use
            self._classifier = IntentClassifier(self.deps.embedder, self.agent.intents)
        return self._classifier

    @timed("reformulate")
    async def reformulate(self, state: ConversationalState) -> Update:
        query = answering.standalone_query(state.message, state.history)
        if self.deps.chat_model is not None and state.history:
            messages = [
                Message("system", self._p("REFORMULATE", prompts.REFORMULATE)),
                Message(
                    "user",
                    f"Conversation:\n{history_text(state.history)}\n\n"
                    f"Latest message: {state.message}",
                ),
            ]
            try:
                result = await self.deps.chat_model.generate(
                    messages, options=self.deps.options("router")
                )
                lines = result.content.strip().strip('"').splitlines()
                query = (lines[0].strip() if lines else "") or query
            except LLMError as exc:
                log.warning("agent %s: reformulate failed (%s)", self.agent.name, exc)
        return {"query": query, "metadata": {"reformulated_query": query, "search_query": query}}

    async def _llm_intent(self, state: ConversationalState) -> IntentChoice:
        assert self.deps.chat_model is not None
        allowed = [INFORMATION, CLARIFICATION, *self.agent.intents]
        listed = "\n".join(f"- {n}: {t.description}" for n, t in self.agent.intents.items())
        messages = [
            Message("system", self._p("CLASSIFY", prompts.CLASSIFY, intents=listed)),
            Message("user", state.query),
        ]
        choice = await self.deps.chat_model.structured(
            messages, IntentChoice, options=self.deps.options("router")
        )
        if choice.intent not in allowed:
            raise LLMOutputError(f"unknown intent {choice.intent!r}")
        return choice

    @timed("classify")
    async def classify(self, state: ConversationalState) -> Update:
        choice: IntentChoice | None = None
        source = "embedding"
        if self.deps.chat_model is not None:
            try:
                choice = await self._llm_intent(state)
                source = "llm"
            except LLMError as exc:
                log.warning("agent %s: intent failed (%s); offline", self.agent.name, exc)
        if choice is None:
            decided = self.classifier.classify(state.query, state.history)
            choice = IntentChoice(
                intent=decided.intent,
                confidence=float(decided.confidence),
                reasoning=decided.reasoning,
            )
        intent = {
            "intent": choice.intent,
            "confidence": round(choice.confidence, 4),
            "reasoning": choice.reasoning,
            "classifier": source,
        }
        return {"intent": choice.intent, "metadata": {"intent": intent}}

    def after_classify(
        self, state: ConversationalState
    ) -> Literal["retrieve", "clarify", "template"]:
        if state.intent == CLARIFICATION:
            return "clarify"
        return "template" if state.intent in self.agent.intents else "retrieve"

    @timed("clarify")
    async def clarify(self, state: ConversationalState) -> Update:
        if self.deps.chat_model is None:
            reply = clarifying_question(state.query, self.agent.description)
            emit(reply)
        else:
            messages = [
                Message("system", self._p("CLARIFY", prompts.CLARIFY)),
                Message("user", state.query),
            ]
            reply = await stream_reply(self.deps.chat_model, messages, self.deps.options("answer"))
        return {"reply": reply, "metadata": {"clarifying_question": True}}

    @timed("template")
    async def template(self, state: ConversationalState) -> Update:
        reply = self.agent.intents[state.intent].response
        emit(reply)
        return {"reply": reply, "metadata": {"template": state.intent}}

    @timed("retrieve")
    async def retrieve(self, state: ConversationalState) -> Update:
        result = await answering.search(
            self.deps, self.agent, state.query, state.options, state.user_id
        )
        threshold = self.deps.retriever(self.agent, state.options.get("kb")).config.gate_threshold
        gate = answering.gate_metadata(result, threshold)
        return {"hits": result.hits, "gate": gate, "metadata": {"gate": gate}}

    def after_retrieve(self, state: ConversationalState) -> Literal["refuse", "generate"]:
        return "refuse" if state.gate.get("no_answer") or not state.hits else "generate"

    @timed("refuse")
    async def refuse(self, state: ConversationalState) -> Update:
        out = answering.refuse(self.agent)
        return {"reply": out.reply, "citations": [], "no_answer": True}

    @timed("generate")
    async def generate(self, state: ConversationalState) -> Update:
        out = await answering.answer(
            self.deps,
            self.agent,
            question=state.message,
            query=state.query,
            hits=state.hits,
            history=state.history,
            system=self._p("SYSTEM", prompts.SYSTEM),
        )
        return {"reply": out.reply, "citations": out.citations, "no_answer": out.no_answer}
