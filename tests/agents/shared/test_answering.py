"""Retrieval runs off the engine's event loop, so one turn's CPU work does not freeze the
others (their routing, their streamed tokens)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from ..helpers import BlockingKB, EngineFactory, run


def test_a_turn_searching_does_not_hold_the_event_loop(
    make_engine: EngineFactory, kbs: dict[str, KnowledgeBase]
) -> None:
    release = threading.Event()
    engine = make_engine(kb_opener=lambda name: BlockingKB(kbs[name], release))

    async def other_work() -> None:
        await asyncio.sleep(0.2)  # runs only if the loop is free while the turn searches
        release.set()

    async def both() -> Any:
        turn = engine.run_turn(
            TurnRequest(
                "What are the side effects of ibuprofen?",
                user_id="u1",
                conversation=ConversationState("c1"),
                options=TurnOptions(agent="medical"),
            )
        )
        result, _ = await asyncio.gather(turn, other_work())
        return result

    result = run(both())
    assert not result.no_answer and "ibuprofen" in result.reply.lower()
