from __future__ import annotations

from typing import Any

from ragchat.agents.config import AppConfig
from ragchat.agents.deps import AgentDeps, SafetyAdapter, as_guard
from ragchat.agents.engine import ChatEngine
from ragchat.index.base import Embedder
from ragchat.index.kb import KnowledgeBase
from ragchat.llm.fake import ScriptedChatModel
from ragchat.retrieve.expansion import PRFExpander
from ragchat.retrieve.llm_expansion import LLMExpander
from ragchat.safety.base import SafetyVerdict
from ragchat.settings import Settings

from .helpers import FakeSafety, run


def test_retrievers_are_built_once_with_the_agents_settings(engine: ChatEngine) -> None:
    deps = engine.deps
    medical = deps.retriever(deps.agent("medical"))
    assert medical is deps.retriever(deps.agent("medical"))
    assert medical.config.gate_threshold == 0.35
    companion = deps.retriever(deps.agent("companion"))
    assert companion.config.top_k == 3 and companion.config.parents is False
    assert deps.retriever(deps.agent("tutor"), "medical").kb is medical.kb  # a KB opens once


def test_query_expansion_asks_the_chat_model_when_there_is_one(
    settings: Settings, app_config: AppConfig, embedder: Embedder, kbs: dict[str, KnowledgeBase]
) -> None:
    expanding = settings.model_copy(
        update={"retrieval": settings.retrieval.model_copy(update={"query_expansion": True})}
    )
    model = ScriptedChatModel()

    def deps(**fields: Any) -> AgentDeps:
        return AgentDeps(
            app_config=app_config, embedder=embedder, kb_opener=kbs.__getitem__, **fields
        )

    tutor = app_config.agents["tutor"]
    online = deps(settings=expanding, chat_model=model).retriever(tutor).expander
    assert isinstance(online, LLMExpander) and online.model is model
    assert isinstance(deps(settings=expanding).retriever(tutor).expander, PRFExpander)


def test_persona_from_the_file(engine: ChatEngine) -> None:
    persona = engine.deps.persona(engine.agents["companion"])
    assert persona.name == "Robin"
    assert "fictional" in persona.text and not persona.text.startswith("---")


def test_safety_guards() -> None:
    class Bare:
        async def classify(self, text: str, history: object = ()) -> SafetyVerdict:
            return SafetyVerdict.block("self_harm")

    guard = as_guard(Bare())
    assert isinstance(guard, SafetyAdapter)
    verdict = run(guard.classify("x"))
    assert "988" in guard.refusal_for(verdict)
    fake = FakeSafety()
    assert as_guard(fake) is fake and as_guard(None) is None


def test_offline_flag(engine: ChatEngine) -> None:
    assert isinstance(engine.deps, AgentDeps) and engine.deps.offline
