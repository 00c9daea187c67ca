"""What an engine is built from: the retriever cache (built once per agent and KB, with the
agent's settings, query expansion by the model when there is one), the companion's persona, the
safety guard, and wiring that cannot change after the build."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from ragchat.agents.companion.persona import load_persona
from ragchat.agents.config import AppConfig
from ragchat.agents.engine import ChatEngine
from ragchat.agents.retrievers import RetrieverCache
from ragchat.embed.base import Embedder
from ragchat.llm.fake import ScriptedChatModel
from ragchat.retrieve.expansion import PRFExpander
from ragchat.retrieve.llm_expansion import LLMExpander
from ragchat.safety.base import SafetyVerdict
from ragchat.safety.guard import StandardRefusals, as_guard
from ragchat.settings import Settings
from ragchat.types import DocumentLabel, Exclude
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .helpers import FakeSafety, run


def test_retrievers_are_built_once_with_the_agents_settings(engine: ChatEngine) -> None:
    knowledge = engine.wiring.knowledge
    medical = knowledge.retriever(engine.agents["medical"])
    assert medical is knowledge.retriever(engine.agents["medical"])
    assert medical.config.gate_threshold == 0.35
    companion = knowledge.retriever(engine.agents["companion"])
    assert companion.config.top_k == 3 and companion.config.parents is False
    tutor_on_medical = knowledge.retriever(engine.agents["tutor"], "medical")
    assert tutor_on_medical.kb is medical.kb  # a KB opens once


def test_query_expansion_asks_the_chat_model_when_there_is_one(
    settings: Settings, app_config: AppConfig, embedder: Embedder, kbs: dict[str, KnowledgeBase]
) -> None:
    expanding = settings.model_copy(
        update={"retrieval": settings.retrieval.model_copy(update={"query_expansion": True})}
    )
    model = ScriptedChatModel()
    tutor = app_config.agents["tutor"]
    online = RetrieverCache(expanding, embedder, model, opener=kbs.__getitem__)
    expander = online.retriever(tutor).expander
    assert isinstance(expander, LLMExpander) and expander.model is model
    offline = RetrieverCache(expanding, embedder, opener=kbs.__getitem__)
    assert isinstance(offline.retriever(tutor).expander, PRFExpander)


def test_visibility_filters_what_a_user_may_not_see(
    settings: Settings, app_config: AppConfig, embedder: Embedder
) -> None:
    asked: list[tuple[str, str, object]] = []

    class Visibility:
        def hidden(self, kb: str, user: str, base: object = None) -> Sequence[str]:
            asked.append((kb, user, base))
            return ("doc-of-bob",) if user == "ann" else ()

        def labels(self, kb: str, user: str) -> dict[str, DocumentLabel]:
            return {}

    cache = RetrieverCache(settings, embedder, visibility=Visibility())
    medical = app_config.agents["medical"]
    ann = cache.visibility(medical, None, "ann")["doc_id"]
    bob = cache.visibility(medical, "textbook", "bob")["doc_id"]
    assert asked == []  # resolved by the knowledge base, against the state it searches
    assert ann.against("state-1") == Exclude(("doc-of-bob",))
    assert bob.against("state-2") == Exclude(())
    assert asked == [("medical", "ann", "state-1"), ("textbook", "bob", "state-2")]
    assert RetrieverCache(settings, embedder).visibility(medical, None, "ann") == {}


def test_persona_from_the_file(app_config: AppConfig) -> None:
    persona = load_persona(app_config, app_config.agents["companion"])
    assert persona.name == "Robin"
    assert "fictional" in persona.text and not persona.text.startswith("---")


def test_safety_guards() -> None:
    class Bare:
        async def classify(
            self, text: str, history: Sequence[tuple[str, str]] = ()
        ) -> SafetyVerdict:
            return SafetyVerdict.block("self_harm")

    guard = as_guard(Bare())
    assert isinstance(guard, StandardRefusals)
    verdict = run(guard.classify("x"))
    assert "988" in guard.refusal_for(verdict)
    fake = FakeSafety()
    assert as_guard(fake) is fake and as_guard(None) is None


def test_the_wiring_is_fixed_after_the_build(engine: ChatEngine) -> None:
    assert engine.chat_model is None and engine.wiring.safety is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        engine.wiring.chat_model = ScriptedChatModel()  # type: ignore[misc]
