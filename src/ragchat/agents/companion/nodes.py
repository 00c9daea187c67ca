"""Companion nodes: gather (look-ups, by tool calls or up front) → reply (chat bubbles) →
remember (the user's statement into long-term memory, stated profile facts into the result)."""

from __future__ import annotations

from ragchat.agents.companion.state import CompanionState
from ragchat.agents.companion.steps import CompanionSteps, ReplyRequest
from ragchat.agents.companion.tools import CompanionTools, profile_updates
from ragchat.agents.config import AgentConfig
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.agents.wiring import AgentWiring

LOST_THREAD = "Sorry, I lost my train of thought!"


class CompanionNodes:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.clock = wiring.clock
        self.tools = CompanionTools(wiring, agent)
        self.steps = CompanionSteps.build(wiring, agent, self.tools)

    @timed("gather")
    async def gather(self, state: CompanionState) -> Update:
        return {"gathered": await self.steps.gather.run(state.turn)}

    @timed("reply")
    async def reply(self, state: CompanionState) -> Update:
        bubbles = await self.steps.reply.run(ReplyRequest(state.turn, state.gathered))
        bubbles = [b for b in bubbles if b.strip()] or [LOST_THREAD]
        reply = "\n\n".join(bubbles)
        self.wiring.stream.whole(reply)
        return {"reply": reply, "bubbles": bubbles, "persona": self.tools.persona.name}

    @timed("remember")
    async def remember(self, state: CompanionState) -> Update:
        """Keeps the user's message as a long-term memory and returns stated profile facts
        (``user_profile``) for the caller to persist."""
        turn = state.turn
        await self.tools.keep(turn)
        updates = profile_updates(turn.message)
        return {"user_profile": turn.user_profile.merged(updates)} if updates else {}
