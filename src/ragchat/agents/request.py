"""``TurnRequest``: one chat turn as a caller asks for it, the one value every route, the CLI
and the library hand down to ``ChatEngine``; and ``validate``, the one place a turn's input is
checked (the engine owns it: ``ChatEngine.validate``).

A caller that stores something before the turn runs (the API stores the user message) validates
first, so that bad input is refused before anything is stored; the engine then does not check
the validated request again."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from ragchat.agents.types import ConversationState, InvalidMessage, TurnOptions, UnknownAgent


@dataclass(frozen=True)
class TurnRequest:
    """The message, who asks, the conversation as the caller loaded it (an empty id: not
    loaded yet, the API loads or starts it) and the per-turn options. ``validated`` is set by
    ``validate`` only."""

    message: str
    user_id: str = ""
    conversation: ConversationState = field(default_factory=lambda: ConversationState(""))
    options: TurnOptions = field(default_factory=TurnOptions)
    validated: bool = field(default=False, compare=False)


def validate(request: TurnRequest, agents: Collection[str]) -> TurnRequest:
    """The request with its message stripped, marked validated: ``InvalidMessage`` for an
    empty message, ``UnknownAgent`` for a forced agent ``agents`` does not name."""
    if request.validated:
        return request
    message = request.message.strip()
    if not message:
        raise InvalidMessage("the message is empty")
    agent = request.options.agent
    if agent is not None and agent not in agents:
        raise UnknownAgent(f"unknown agent {agent!r}; configured: {', '.join(sorted(agents))}")
    return replace(request, message=message, validated=True)
