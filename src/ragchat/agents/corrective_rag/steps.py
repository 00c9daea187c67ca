"""The corrective agent's steps, each a model implementation and a heuristic one: decide
(search, or small talk?), grade the passages, rewrite a weak query, reply to small talk."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.corrective_rag import prompts
from ragchat.agents.corrective_rag.state import Decision, Grades
from ragchat.agents.heuristics import grade_documents, rewrite_query
from ragchat.agents.shared import answering
from ragchat.agents.shared.prompting import history_messages, history_text, prompt
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.shared.streaming import Streamer
from ragchat.agents.wiring import AgentWiring
from ragchat.errors import LLMOutputError
from ragchat.llm.base import ChatModel, Message
from ragchat.types import HistoryMessage, Hit

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


@dataclass(frozen=True)
class Said:
    """A message and the conversation before it."""

    message: str
    history: tuple[HistoryMessage, ...] = ()


@dataclass(frozen=True)
class GradeRequest:
    question: str
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class RewriteRequest:
    query: str
    hits: tuple[Hit, ...]


Decider = Step[Said, Decision]
Grader = Step[GradeRequest, tuple[float, ...]]
Rewriter = Step[RewriteRequest, str]
SmallTalk = Step[Said, str]  # streams the reply


class _ModelStep:
    def __init__(self, model: ChatModel, agent: AgentConfig, wiring: AgentWiring) -> None:
        self.model = model
        self.agent = agent
        self.wiring = wiring

    def _p(self, key: str, default: str) -> str:
        return prompt(self.agent, key, default, description=self.agent.description)


class ModelDecider(_ModelStep):
    async def run(self, request: Said) -> Decision:
        conversation = history_text(request.history, self.wiring.tuning.prompt_history_messages)
        messages = [
            Message("system", self._p("DECIDE", prompts.DECIDE)),
            Message("user", f"Conversation:\n{conversation}\n\nLatest message: {request.message}"),
        ]
        return await self.model.structured(
            messages, Decision, options=self.wiring.options("router")
        )


class RuleDecider:
    async def run(self, request: Said) -> Decision:
        kind = smalltalk(request.message)
        return Decision(
            action="respond" if kind else "retrieve",
            query=answering.standalone_query(request.message, request.history),
            reasoning=f"offline: {kind or 'question'}",
        )


class ModelGrader(_ModelStep):
    async def run(self, request: GradeRequest) -> tuple[float, ...]:
        passages = answering.sources_block(request.hits, self.wiring.tuning.passage_chars)
        messages = [
            Message("system", self._p("GRADE", prompts.GRADE)),
            Message("user", f"Question: {request.question}\n\nPassages:\n\n{passages}"),
        ]
        graded = await self.model.structured(
            messages, Grades, options=self.wiring.options("router")
        )
        if len(graded.scores) != len(request.hits):
            raise LLMOutputError(f"{len(graded.scores)} grades for {len(request.hits)} passages")
        return tuple(min(max(float(s), 0.0), 1.0) for s in graded.scores)


class HeuristicGrader:
    async def run(self, request: GradeRequest) -> tuple[float, ...]:
        return tuple(float(s) for s in grade_documents(request.hits, request.question))


class ModelRewriter(_ModelStep):
    async def run(self, request: RewriteRequest) -> str:
        messages = [
            Message("system", self._p("REWRITE", prompts.REWRITE)),
            Message("user", f"Query: {request.query}"),
        ]
        result = await self.model.generate(messages, options=self.wiring.options("router"))
        lines = result.content.strip().strip('"').splitlines()
        query = lines[0].strip() if lines else ""
        if not query:
            raise LLMOutputError("the model wrote no query")
        return query


class HeuristicRewriter:
    async def run(self, request: RewriteRequest) -> str:
        return rewrite_query(request.query, request.hits)


class ModelSmallTalk(_ModelStep):
    async def run(self, request: Said) -> str:
        messages = [
            Message("system", self._p("RESPOND", prompts.RESPOND)),
            *history_messages(request.history, self.wiring.tuning.model_history_messages),
            Message("user", request.message),
        ]
        return await self.wiring.stream.reply(self.model, messages, self.wiring.options("answer"))


class CannedSmallTalk:
    """A greeting or a thank-you naming the agent's topic."""

    def __init__(self, topic: str, stream: Streamer) -> None:
        self.topic = topic[:1].lower() + topic[1:]
        self.stream = stream

    async def run(self, request: Said) -> str:
        template = prompts.THANKS if smalltalk(request.message) == "thanks" else prompts.GREETING
        reply = template.replace("{topic}", self.topic)
        self.stream.whole(reply)
        return reply


@dataclass(frozen=True)
class CorrectiveSteps:
    decide: Decider
    grade: Grader
    rewrite: Rewriter
    small_talk: SmallTalk

    @classmethod
    def build(cls, wiring: AgentWiring, agent: AgentConfig, topic: str) -> CorrectiveSteps:
        model = wiring.chat_model

        def label(step: str) -> str:
            return wiring.label(agent, step)

        return cls(
            decide=choose(
                label("decide"), model, lambda m: ModelDecider(m, agent, wiring), RuleDecider()
            ),
            grade=choose(
                label("grade"), model, lambda m: ModelGrader(m, agent, wiring), HeuristicGrader()
            ),
            rewrite=choose(
                label("rewrite"),
                model,
                lambda m: ModelRewriter(m, agent, wiring),
                HeuristicRewriter(),
            ),
            small_talk=choose(
                label("respond"),
                model,
                lambda m: ModelSmallTalk(m, agent, wiring),
                CannedSmallTalk(topic, wiring.stream),
            ),
        )
