"""The support agent's reply: the model's, streamed, or the heuristic ``support_reply``."""

from __future__ import annotations

from dataclasses import dataclass

from ragchat.agents.config import AgentConfig
from ragchat.agents.heuristics import support_reply
from ragchat.agents.shared.prompting import history_messages, prompt
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.shared.streaming import Streamer
from ragchat.agents.support import prompts
from ragchat.agents.wiring import AgentWiring
from ragchat.llm.base import ChatModel, Message
from ragchat.types import HistoryMessage


@dataclass(frozen=True)
class Said:
    message: str
    history: tuple[HistoryMessage, ...] = ()


Replier = Step[Said, str]  # streams the reply


class ModelReply:
    def __init__(self, model: ChatModel, agent: AgentConfig, wiring: AgentWiring) -> None:
        self.model = model
        self.system = prompt(agent, "SYSTEM", prompts.SYSTEM)
        self.wiring = wiring

    async def run(self, request: Said) -> str:
        messages = [
            Message("system", self.system),
            *history_messages(request.history, self.wiring.tuning.model_history_messages),
            Message("user", request.message),
        ]
        return await self.wiring.stream.reply(self.model, messages, self.wiring.options("answer"))


class HeuristicReply:
    def __init__(self, stream: Streamer) -> None:
        self.stream = stream

    async def run(self, request: Said) -> str:
        reply = support_reply(request.message, request.history)
        self.stream.whole(reply)
        return reply


def replier(wiring: AgentWiring, agent: AgentConfig) -> Replier:
    return choose(
        wiring.label(agent, "respond"),
        wiring.chat_model,
        lambda model: ModelReply(model, agent, wiring),
        HeuristicReply(wiring.stream),
    )
