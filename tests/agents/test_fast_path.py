"""The fast answer path through the whole engine: one turn embeds its message once (safety,
routing, retrieval and the composer share the vector), and a repeated reply embeds no
sentence again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragchat.agents.bootstrap import ensure_knowledge_bases
from ragchat.agents.config import load_config
from ragchat.agents.engine import ChatEngine
from ragchat.agents.factory import build_engine
from ragchat.agents.request import TurnRequest
from ragchat.agents.shared.prewarm import prewarm_sentences, sentence_file
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings


@pytest.fixture(scope="module")
def fake() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, fake: HashingEmbedder) -> Settings:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("fast-path")), config_file=None)
    ensure_knowledge_bases(settings, load_config(), fake)
    return settings


@pytest.fixture(scope="module")
def engine(settings: Settings, fake: HashingEmbedder) -> ChatEngine:
    engine = build_engine(settings, load_config(), embedder=fake)  # with the offline safety check
    engine.warm_up()  # the router's cards (one of them is a test message) are embedded here
    return engine


def _turn(engine: ChatEngine, message: str, agent: str | None = None) -> TurnResult:
    return asyncio.run(
        engine.run_turn(
            TurnRequest(
                message,
                user_id="u1",
                conversation=ConversationState("fast-path"),
                options=TurnOptions(agent=agent),
            )
        )
    )


@pytest.mark.parametrize(
    ("message", "agent"),
    [
        ("What are the side effects of ibuprofen?", None),  # routed by the embedding router
        ("How much sleep does a toddler need?", "parenting"),
        ("What does bile do in digestion?", "tutor"),
    ],
)
def test_a_turn_embeds_its_message_once(
    engine: ChatEngine, fake: HashingEmbedder, message: str, agent: str | None
) -> None:
    fake.embedded.clear()
    result = _turn(engine, message, agent)
    assert result.reply and result.citations
    assert fake.embedded[message] == 1


def test_a_repeated_question_embeds_no_sentence_again(
    engine: ChatEngine, fake: HashingEmbedder
) -> None:
    message = "Can I take amoxicillin if I am allergic to penicillin?"
    first = _turn(engine, message, "medical")
    fake.embedded.clear()
    second = _turn(engine, message, "medical")
    assert second.reply == first.reply
    assert sum(fake.embedded.values()) == 0  # the message and every sentence were cached


def test_prewarmed_sentences_leave_a_turn_only_its_question_to_embed(
    settings: Settings, fake: HashingEmbedder
) -> None:
    engine = build_engine(settings, load_config(), embedder=fake)  # fresh caches
    engine.warm_up()
    assert prewarm_sentences(engine) > 100
    assert engine.embedder.stats()["sentences_prewarmed"] is True  # type: ignore[attr-defined]
    fake.embedded.clear()
    message = "Which medicines interact with migraine treatment?"
    result = _turn(engine, message, "medical")
    assert result.citations and fake.embedded[message] == 1
    quoted = " ".join(result.reply.split())
    assert not [t for t in fake.embedded if t != message and t[:40] in quoted]


def test_prewarmed_words_leave_the_refusal_checks_only_the_questions_words(
    settings: Settings, fake: HashingEmbedder
) -> None:
    engine = build_engine(settings, load_config(), embedder=fake)
    engine.warm_up()
    prewarm_sentences(engine)
    fake.embedded.clear()
    message = "Does migraine treatment help with hiccups?"  # "hiccups": in no passage
    _turn(engine, message, "medical")
    words = [t for t in fake.embedded if " " not in t]
    assert words and all(w in message.lower() for w in words), words


def test_a_restarted_server_loads_its_sentence_vectors(
    settings: Settings, fake: HashingEmbedder
) -> None:
    prewarm_sentences(build_engine(settings, load_config(), embedder=fake))
    assert sentence_file(settings.data_dir).is_file()
    restarted = build_engine(settings, load_config(), embedder=fake)  # fresh caches
    fake.embedded.clear()
    assert prewarm_sentences(restarted) > 100
    assert sum(fake.embedded.values()) == 0  # every sentence came from the saved file
