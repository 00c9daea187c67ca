"""ChatEngine: results, the event stream (order, deltas joining to the reply),
cancellation on client disconnect, and titles."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ragchat.agents.engine import ChatEngine
from ragchat.agents.events import (
    CitationsEvent,
    FinalEvent,
    MetadataEvent,
    TokenEvent,
    TurnEvent,
)
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.errors import LLMUnavailable
from ragchat.llm.base import GenerationOptions, Message
from ragchat.llm.fake import ScriptedChatModel
from ragchat.settings import Settings

from .helpers import EngineFactory, run


async def _events(engine: ChatEngine, message: str, **options: Any) -> list[TurnEvent]:
    stream = engine.stream_turn(
        TurnRequest(
            message,
            user_id="u1",
            conversation=ConversationState("s1"),
            options=TurnOptions(**options),
        )
    )
    return [event async for event in stream]


def _tokens(events: list[TurnEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TokenEvent)]


def _check_order(events: list[TurnEvent]) -> tuple[str, TurnResult]:
    first, citations, last = events[0], events[-2], events[-1]
    assert isinstance(first, MetadataEvent)
    assert isinstance(citations, CitationsEvent) and isinstance(last, FinalEvent)
    assert all(isinstance(e, TokenEvent) for e in events[1:-2]) and len(events) > 4
    final = last.result
    tokens = "".join(_tokens(events))
    assert tokens == final.reply
    assert list(citations.citations) == final.citations
    assert first.agent == final.agent == final.metadata.routing.agent
    assert first.routing == final.metadata.routing
    timings = final.metadata.timings
    assert timings["total"] >= timings["route"] > 0
    return tokens, final


def test_stream_order_and_tokens_join_to_the_reply(engine: ChatEngine) -> None:
    tokens, final = _check_order(run(_events(engine, "How is cardiac output calculated?")))
    assert final.agent == "tutor" and final.citations
    assert "[1]" in tokens


def test_stream_of_refusals_and_bubbles(engine: ChatEngine) -> None:
    _, final = _check_order(run(_events(engine, "Who won the 2014 World Cup?", agent="medical")))
    assert final.no_answer and final.citations == []
    _, final = _check_order(run(_events(engine, "Tell me about your garden", agent="companion")))
    assert final.bubbles and final.reply == "\n\n".join(final.bubbles)


def test_stream_passes_model_deltas_through(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(["I hear you. That sounds like a really long week."])
    events = run(_events(make_engine(chat_model=model), "I'm exhausted", agent="support"))
    tokens, _ = _check_order(events)
    deltas = _tokens(events)
    assert tokens == "I hear you. That sounds like a really long week." and len(deltas) == 10


def test_whole_replies_are_paced_when_streamed_and_model_deltas_are_not(
    make_engine: EngineFactory, settings: Settings
) -> None:
    """An offline reply exists whole at once; streamed, its deltas are spaced ``stream_pace_ms``
    apart so the page shows it being written (a lower bound: sleeping never takes less)."""

    def pacing(ms: float) -> Settings:
        llm = settings.llm.model_copy(update={"stream_pace_ms": ms})
        return settings.model_copy(update={"llm": llm})

    async def arrivals(engine: ChatEngine, message: str, agent: str) -> list[float]:
        stream = engine.stream_turn(
            TurnRequest(
                message,
                user_id="u1",
                conversation=ConversationState("s1"),
                options=TurnOptions(agent=agent),
            )
        )
        loop = asyncio.get_running_loop()
        return [loop.time() async for e in stream if isinstance(e, TokenEvent)]

    times = run(arrivals(make_engine(settings=pacing(40.0)), "What is ibuprofen?", "medical"))
    assert len(times) > 5
    assert times[-1] - times[0] >= 0.9 * 0.040 * (len(times) - 1)

    model = ScriptedChatModel(["I hear you. That sounds like a really long week."] * 2)
    # A model's deltas arrive at the model's own pace: a full second between them would show.
    modelled = make_engine(settings=pacing(1000.0), chat_model=model)
    times = run(arrivals(modelled, "I'm exhausted", "support"))
    assert len(times) == 10 and times[-1] - times[0] < 5.0


class _SlowModel(ScriptedChatModel):
    """Streams one delta, then hangs until cancelled; records that it was cancelled."""

    cancelled = False

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        yield "Hello"
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            _SlowModel.cancelled = True
            raise
        yield " never"


def test_closing_the_stream_cancels_the_turn(make_engine: EngineFactory) -> None:
    engine = make_engine(chat_model=_SlowModel())

    async def disconnect_after_first_token() -> list[TurnEvent]:
        seen = []
        stream = engine.stream_turn(
            TurnRequest(
                "I had a rough day",
                user_id="u1",
                conversation=ConversationState("s2"),
                options=TurnOptions(agent="support"),
            )
        )
        async for event in stream:
            seen.append(event)
            if isinstance(event, TokenEvent):
                break
        await stream.aclose()  # what a server does when the client goes away
        await asyncio.sleep(0)
        return seen

    seen = asyncio.run(asyncio.wait_for(disconnect_after_first_token(), timeout=10))
    assert [type(e) for e in seen] == [MetadataEvent, TokenEvent]
    assert _SlowModel.cancelled


def test_run_turn_returns_assigned_agent_and_keeps_no_history(engine: ChatEngine) -> None:
    conversation = ConversationState("r1")
    result = run(
        engine.run_turn(TurnRequest("What does bile do?", user_id="u", conversation=conversation))
    )
    assert result.metadata.assigned_agent == "tutor"
    assert conversation.history == [] and conversation.assigned_agent is None


def test_titles(engine: ChatEngine, make_engine: EngineFactory) -> None:
    title = run(engine.title("What are the side effects of ibuprofen?", "Stomach upset..."))
    assert 0 < len(title.split()) <= 6 and "ibuprofen" in title.lower()
    model = ScriptedChatModel(['"Ibuprofen side effects."'])
    assert (
        run(make_engine(chat_model=model).title("What about ibuprofen?"))
        == "Ibuprofen side effects"
    )
    failing = ScriptedChatModel([LLMUnavailable("down")])
    assert "ibuprofen" in run(make_engine(chat_model=failing).title("ibuprofen doses")).lower()
