"""A turn embeds its question once: safety, routing and retrieval share ``Turn.embedding``
(the composer's own sentence work is not counted here). The process-wide caches are turned off
(``query_cache`` 0, no micro-batching), so only the turn's own sharing can keep the count at
one."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragchat.agents.bootstrap import ensure_knowledge_bases
from ragchat.agents.config import load_config
from ragchat.agents.engine import ChatEngine
from ragchat.agents.factory import build_engine
from ragchat.agents.request import TurnRequest
from ragchat.agents.turn_vectors import TurnVectors, lending
from ragchat.agents.types import ConversationState, Turn, TurnOptions
from ragchat.embed.base import Matrix, Vector
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings

# The composers (heuristics, reader) and the intent check embed the question for their own ends.
NOT_COUNTED = (
    "ragchat.agents.heuristics.compose",
    "ragchat.agents.heuristics.intent",
    "ragchat.reader",
)


class WhoEmbeds(HashingEmbedder):
    """The hashing fake recording, for every embedding of ``watched``, who asked: "turn" when
    it came through ``Turn.embedding``, else the first ragchat module outside ``embed/``."""

    def __init__(self) -> None:
        super().__init__()
        self.watched = ""
        self.askers: list[str] = []

    def _note(self, texts: Sequence[str]) -> None:
        if not self.watched or self.watched not in texts:
            return
        frame = sys._getframe(2)
        modules = []
        while frame is not None:
            modules.append(str(frame.f_globals.get("__name__", "")))
            frame = frame.f_back  # type: ignore[assignment]
        if "ragchat.agents.types" in modules:
            self.askers.append("turn")
        else:
            ours = [m for m in modules if m.startswith("ragchat.") and ".embed." not in m]
            self.askers.append(ours[0] if ours else "?")

    def embed_query(self, text: str) -> Vector:
        self._note([text])
        return super().embed_query(text)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        self._note(texts)
        return super().embed_documents(texts, progress=progress)


def test_a_turn_computes_its_message_vector_once() -> None:
    fake = HashingEmbedder()
    turn = Turn(message="What does bile do?")
    first = turn.embedding(fake)
    assert turn.embedding(fake) is first and fake.embedded["What does bile do?"] == 1
    agents_turn = Turn(message="What does bile do?", vectors=turn.vectors)
    assert agents_turn.embedding(fake) is first  # the agent's copy of the turn shares it
    other = Turn(message="and the liver?", vectors=turn.vectors)
    assert not np.array_equal(other.embedding(fake), first)  # keyed by the text


def test_a_lent_turn_vector_answers_only_its_own_message() -> None:
    fake = HashingEmbedder()
    view = TurnVectors(fake)
    turn = Turn(message="What does bile do?")
    vector = turn.embedding(fake)
    with lending(turn):
        assert view.embed_query("What does bile do?") is vector
        rows = view.embed_documents(["What does bile do?", "Something else"])
    assert fake.embedded == {"What does bile do?": 1, "Something else": 1}
    assert np.array_equal(rows[0], vector)
    assert np.allclose(rows[1], fake.embed_query("Something else"))
    view.embed_query("What does bile do?")  # nothing lent: embedded
    assert fake.embedded["What does bile do?"] == 2


@pytest.fixture(scope="module")
def who() -> WhoEmbeds:
    return WhoEmbeds()


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory, who: WhoEmbeds) -> ChatEngine:
    settings = Settings(
        data_dir=Path(tmp_path_factory.mktemp("turn-vectors")),
        config_file=None,
        embedding={"query_cache": 0, "sentence_cache": 0, "max_batch": 1},  # type: ignore[arg-type]
    )
    ensure_knowledge_bases(settings, load_config(), who)
    engine = build_engine(settings, load_config(), embedder=who)  # with the offline safety check
    engine.warm_up()
    return engine


@pytest.mark.parametrize(
    ("message", "agent"),
    [
        ("What are the side effects of ibuprofen?", None),  # safety, routing and retrieval
        ("What does bile do in digestion?", "tutor"),  # safety and retrieval
    ],
)
def test_a_turn_embeds_its_question_once(
    uncached: ChatEngine, who: WhoEmbeds, message: str, agent: str | None
) -> None:
    who.watched, who.askers = message, []
    request = TurnRequest(
        message, user_id="u1", conversation=ConversationState("c1"), options=TurnOptions(agent)
    )
    result = asyncio.run(uncached.run_turn(request))
    assert result.citations, result.reply
    if agent is None:
        assert result.metadata.routing.router == "embedding"
    counted = [a for a in who.askers if not a.startswith(NOT_COUNTED)]
    assert counted == ["turn"], who.askers
