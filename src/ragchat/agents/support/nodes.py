"""Support nodes. Crisis language is checked here as well as by the safety stage, so a
crisis message always gets the crisis resources, even with no safety classifier configured
and whatever a model would have said."""

from __future__ import annotations

from typing import Literal

from ragchat.agents.config import AgentConfig
from ragchat.agents.heuristics import is_crisis
from ragchat.agents.shared.prompting import prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.support import prompts
from ragchat.agents.support.state import SupportState
from ragchat.agents.support.steps import Said, replier
from ragchat.agents.wiring import AgentWiring
from ragchat.safety.responses import crisis_resources


class SupportNodes:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.clock = wiring.clock
        self.reply = replier(wiring, agent)

    @timed("check")
    async def check(self, state: SupportState) -> Update:
        return {"crisis": is_crisis(state.turn.message)}

    def after_check(self, state: SupportState) -> Literal["crisis", "respond"]:
        return "crisis" if state.crisis else "respond"

    @timed("crisis")
    async def crisis(self, state: SupportState) -> Update:
        reply = prompt(self.agent, "CRISIS", prompts.CRISIS, resources=crisis_resources())
        self.wiring.stream.whole(reply)
        return {"reply": reply}

    @timed("respond")
    async def respond(self, state: SupportState) -> Update:
        return {"reply": await self.reply.run(Said(state.turn.message, state.turn.history))}
