"""Agent kinds are registered, not listed in the engine: a kind added by ``register_kind`` or
by a package's ``ragchat.agent_kinds`` entry point is configured, routed to and streamed like
the built-in ones."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ragchat.agents import kinds
from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.events import FinalEvent, TokenEvent, TurnEvent
from ragchat.agents.kinds import AgentKind, get_kind, kind_names, register_kind
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import AgentOutcome, ConversationState, Turn, TurnOptions
from ragchat.agents.wiring import AgentWiring
from ragchat.errors import ConfigError

from .helpers import EngineFactory, run


@dataclass
class Shouter:
    """An agent without LangGraph: it streams the message back in capitals."""

    wiring: AgentWiring

    async def run(self, turn: Turn) -> AgentOutcome:
        reply = turn.message.upper()
        self.wiring.stream.whole(reply)
        return AgentOutcome(reply=reply, timings={"shout": 0.1})


def build_shouter(wiring: AgentWiring, agent: AgentConfig) -> Shouter:
    return Shouter(wiring)


SHOUT = AgentKind("shout", build_shouter)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Registrations made by a test are undone after it."""
    monkeypatch.setattr(kinds, "_kinds", dict(kinds._kinds))
    monkeypatch.setattr(kinds, "_plugins_loaded", False)
    yield


def _config() -> AppConfig:
    return AppConfig(
        agents={
            "shouty": AgentConfig(kind="shout", description="Repeats what you say, loudly."),
            "support": AgentConfig(kind="support", description="Emotional support."),
        }
    )


def test_the_built_in_kinds_are_registered() -> None:
    assert {"support", "rag", "corrective_rag", "conversational_rag", "companion"} <= set(
        kind_names()
    )
    assert get_kind("rag").needs_knowledge_base and get_kind("rag").answers_questions
    assert not get_kind("companion").answers_questions


def test_an_unknown_kind_is_a_config_error_naming_the_known_ones(registry: None) -> None:
    with pytest.raises(ValueError, match=r"unknown agent kind 'shout'.*corrective_rag"):
        _config()
    with pytest.raises(ConfigError, match="unknown agent kind"):
        get_kind("shout")


def test_a_registered_kind_runs_and_streams_without_engine_changes(
    registry: None, make_engine: EngineFactory
) -> None:
    register_kind(SHOUT)
    engine = make_engine(_config())
    conversation = ConversationState("c1")
    result = run(
        engine.run_turn(
            TurnRequest(
                "hello there",
                user_id="u1",
                conversation=conversation,
                options=TurnOptions(agent="shouty"),
            )
        )
    )
    assert (result.agent, result.reply) == ("shouty", "HELLO THERE")
    assert result.metadata.timings["shouty.shout"] == 0.1

    async def events() -> list[TurnEvent]:
        stream = engine.stream_turn(
            TurnRequest("and again", user_id="u1", conversation=conversation)
        )
        return [event async for event in stream]

    streamed = run(events())
    tokens = "".join(e.text for e in streamed if isinstance(e, TokenEvent))
    final = streamed[-1]
    assert isinstance(final, FinalEvent) and tokens == final.result.reply == "AND AGAIN"


def test_registering_another_builder_under_a_taken_name_is_refused(registry: None) -> None:
    register_kind(SHOUT)
    register_kind(SHOUT)  # the same kind again is harmless
    with pytest.raises(ConfigError, match="already registered"):
        register_kind(AgentKind("shout", "elsewhere:build"))
    register_kind(AgentKind("shout", "elsewhere:build"), replace=True)
    assert get_kind("shout").builder == "elsewhere:build"


@dataclass
class _EntryPoint:
    value: str
    target: Any

    def load(self) -> Any:
        return self.target


def test_kinds_from_entry_points(registry: None, monkeypatch: pytest.MonkeyPatch) -> None:
    points = [_EntryPoint("tests:SHOUT", SHOUT)]
    monkeypatch.setattr(kinds, "entry_points", lambda group: points)
    assert get_kind("shout") is SHOUT and "shout" in kind_names()
    assert _config().agents["shouty"].kind == "shout"


def test_an_entry_point_that_is_no_kind_is_refused(
    registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "entry_points", lambda group: [_EntryPoint("x:y", object())])
    with pytest.raises(ConfigError, match="no AgentKind"):
        kind_names()
