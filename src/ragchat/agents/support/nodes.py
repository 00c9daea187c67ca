"""Support nodes. Crisis language is checked here as well as by the safety stage, so a
crisis message always gets the crisis resources, even with no safety classifier configured
and whatever a model would have said."""

from __future__ import annotations

from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.heuristics import is_crisis, support_reply
from ragchat.agents.shared.llm import emit, history_messages, prompt, stream_reply
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.support import prompts
from ragchat.agents.support.state import SupportState
from ragchat.llm.base import Message
from ragchat.safety.responses import crisis_resources


class SupportNodes:
    def __init__(self, deps: AgentDeps, agent: AgentConfig) -> None:
        self.deps = deps
        self.agent = agent

    @timed("check")
    async def check(self, state: SupportState) -> Update:
        return {"crisis": is_crisis(state.message)}

    def after_check(self, state: SupportState) -> Literal["crisis", "respond"]:
        return "crisis" if state.crisis else "respond"

    @timed("crisis")
    async def crisis(self, state: SupportState) -> Update:
        reply = prompt(self.agent, "CRISIS", prompts.CRISIS, resources=crisis_resources())
        emit(reply)
        return {"reply": reply, "metadata": {"crisis": True}}

    @timed("respond")
    async def respond(self, state: SupportState) -> Update:
        if self.deps.chat_model is None:
            reply = support_reply(state.message, state.history)
            emit(reply)
        else:
            messages = [
                Message("system", prompt(self.agent, "SYSTEM", prompts.SYSTEM)),
                *history_messages(state.history),
                Message("user", state.message),
            ]
            reply = await stream_reply(self.deps.chat_model, messages, self.deps.options("answer"))
        return {"reply": reply, "metadata": {"crisis": False}}
