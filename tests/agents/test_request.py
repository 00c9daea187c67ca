"""``TurnRequest`` and the engine's one validation of a turn's input."""

from __future__ import annotations

import asyncio

import pytest

from ragchat.agents.engine import ChatEngine
from ragchat.agents.request import TurnRequest, validate
from ragchat.agents.types import ConversationState, InvalidMessage, TurnOptions, UnknownAgent

AGENTS = ("medical", "tutor")


def test_validate_strips_the_message_and_marks_the_request() -> None:
    request = TurnRequest("  What does bile do?\n", user_id="u1")
    checked = validate(request, AGENTS)
    assert checked.message == "What does bile do?" and checked.validated
    assert checked.user_id == "u1" and not request.validated


@pytest.mark.parametrize("message", ["", "   ", "\n\t"])
def test_an_empty_message_is_refused(message: str) -> None:
    with pytest.raises(InvalidMessage):
        validate(TurnRequest(message), AGENTS)


def test_an_unknown_agent_is_refused_naming_the_configured_ones() -> None:
    request = TurnRequest("hello", options=TurnOptions(agent="weather"))
    with pytest.raises(UnknownAgent, match=r"'weather'; configured: medical, tutor"):
        validate(request, AGENTS)


def test_a_validated_request_is_not_checked_again() -> None:
    """The API validates before it stores; the engine then runs the request as it is."""
    checked = validate(TurnRequest("hello", options=TurnOptions(agent="tutor")), AGENTS)
    assert validate(checked, agents=()) is checked


def test_the_engine_validates_through_the_same_function(engine: ChatEngine) -> None:
    with pytest.raises(UnknownAgent, match="weather"):
        engine.validate(TurnRequest("hi", options=TurnOptions(agent="weather")))
    request = TurnRequest("  hi  ", conversation=ConversationState("c1"))
    assert engine.validate(request).message == "hi"
    with pytest.raises(InvalidMessage):
        asyncio.run(engine.run_turn(TurnRequest("  ", conversation=ConversationState("c1"))))
