"""The conversational agent's steps, each a model implementation and a heuristic one:
reformulate a follow-up into a standalone question, classify the request, ask a clarifying
question."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ragchat.agents.config import AgentConfig
from ragchat.agents.conversational_rag import prompts
from ragchat.agents.conversational_rag.state import (
    CLARIFICATION,
    INFORMATION,
    Intent,
    IntentChoice,
)
from ragchat.agents.heuristics import (
    IntentClassifier,
    clarifying_question,
    conversation_topic,
    is_follow_up,
)
from ragchat.agents.shared import answering
from ragchat.agents.shared.prompting import history_text, prompt
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.shared.streaming import Streamer
from ragchat.agents.wiring import AgentWiring
from ragchat.embed.base import Embedder
from ragchat.errors import LLMOutputError
from ragchat.llm.base import ChatModel, Message
from ragchat.types import HistoryMessage


@dataclass(frozen=True)
class Said:
    """A message (or standalone query) and the conversation before it."""

    message: str
    history: tuple[HistoryMessage, ...] = ()


@dataclass(frozen=True)
class Reformulated:
    """A follow-up made standalone (what the answer is read for) and what is searched for it:
    the same text from a model; without one, the message with the person's last two messages
    beside the heuristic's rewrite (``answering.follow_up_search``)."""

    query: str
    search: str


Reformulator = Step[Said, Reformulated]
Classifier = Step[Said, Intent]
Clarifier = Step[Said, str]  # streams the question


class _ModelStep:
    def __init__(self, model: ChatModel, agent: AgentConfig, wiring: AgentWiring) -> None:
        self.model = model
        self.agent = agent
        self.wiring = wiring

    def _p(self, key: str, default: str, **values: str) -> str:
        return prompt(self.agent, key, default, description=self.agent.description, **values)


class ModelReformulator(_ModelStep):
    async def run(self, request: Said) -> Reformulated:
        if not request.history:
            return Reformulated(request.message, request.message)  # nothing to resolve against
        conversation = history_text(request.history, self.wiring.tuning.prompt_history_messages)
        # The heuristic's tracked topic is a hint: it also covers turns older than the window.
        # Not for a message that starts a subject of its own ("My head is pounding. What
        # could it be?"), where the old topic would only pull the model back to it.
        about = conversation_topic(request.history)
        follows = is_follow_up(request.message, request.history)
        hint = f"\nTopic so far: {about}" if about and follows else ""
        messages = [
            Message("system", self._p("REFORMULATE", prompts.REFORMULATE)),
            Message(
                "user",
                f"Conversation:\n{conversation}{hint}\n\nLatest message: {request.message}",
            ),
        ]
        result = await self.model.generate(messages, options=self.wiring.options("router"))
        lines = result.content.strip().strip('"').splitlines()
        query = lines[0].strip() if lines else ""
        if not query:
            raise LLMOutputError("the model wrote no question")
        return Reformulated(query, query)


class HeuristicReformulator:
    async def run(self, request: Said) -> Reformulated:
        query = answering.standalone_query(request.message, request.history)
        return Reformulated(query, answering.follow_up_search(request.message, request.history))


class ModelClassifier(_ModelStep):
    async def run(self, request: Said) -> Intent:
        allowed = [INFORMATION, CLARIFICATION, *self.agent.intents]
        listed = "\n".join(f"- {n}: {t.description}" for n, t in self.agent.intents.items())
        messages = [
            Message("system", self._p("CLASSIFY", prompts.CLASSIFY, intents=listed)),
            Message("user", request.message),
        ]
        choice = await self.model.structured(
            messages, IntentChoice, options=self.wiring.options("router")
        )
        if choice.intent not in allowed:
            raise LLMOutputError(f"unknown intent {choice.intent!r}")
        return Intent(choice.intent, choice.confidence, choice.reasoning, "llm")


class EmbeddingClassifier:
    """Template intents by similarity to their examples (embedded once, on first use), else
    clarification for a vague request, else information."""

    def __init__(self, embedder: Embedder, agent: AgentConfig) -> None:
        self.embedder = embedder
        self.agent = agent
        self._classifier: IntentClassifier | None = None
        self._lock = threading.Lock()

    @property
    def classifier(self) -> IntentClassifier:
        with self._lock:
            if self._classifier is None:
                self._classifier = IntentClassifier(self.embedder, self.agent.intents)
            return self._classifier

    async def run(self, request: Said) -> Intent:
        decided = self.classifier.classify(request.message, request.history)
        return Intent(decided.intent, float(decided.confidence), decided.reasoning, "embedding")


class ModelClarifier(_ModelStep):
    async def run(self, request: Said) -> str:
        messages = [
            Message("system", self._p("CLARIFY", prompts.CLARIFY)),
            Message("user", request.message),
        ]
        return await self.wiring.stream.reply(self.model, messages, self.wiring.options("answer"))


class HeuristicClarifier:
    def __init__(self, agent: AgentConfig, stream: Streamer) -> None:
        self.agent = agent
        self.stream = stream

    async def run(self, request: Said) -> str:
        reply = clarifying_question(request.message, self.agent.description)
        self.stream.whole(reply)
        return reply


@dataclass(frozen=True)
class ConversationalSteps:
    reformulate: Reformulator
    classify: Classifier
    clarify: Clarifier

    @classmethod
    def build(cls, wiring: AgentWiring, agent: AgentConfig) -> ConversationalSteps:
        model = wiring.chat_model

        def label(step: str) -> str:
            return wiring.label(agent, step)

        return cls(
            reformulate=choose(
                label("reformulate"),
                model,
                lambda m: ModelReformulator(m, agent, wiring),
                HeuristicReformulator(),
            ),
            classify=choose(
                label("classify"),
                model,
                lambda m: ModelClassifier(m, agent, wiring),
                EmbeddingClassifier(wiring.embedder, agent),
            ),
            clarify=choose(
                label("clarify"),
                model,
                lambda m: ModelClarifier(m, agent, wiring),
                HeuristicClarifier(agent, wiring.stream),
            ),
        )
