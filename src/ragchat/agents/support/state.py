from __future__ import annotations

from dataclasses import dataclass

from ragchat.agents.shared.state import AgentState


@dataclass
class SupportState(AgentState):
    crisis: bool = False
