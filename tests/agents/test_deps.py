from __future__ import annotations

from ragchat.agents.deps import AgentDeps, SafetyAdapter, as_guard
from ragchat.agents.engine import ChatEngine
from ragchat.safety.base import SafetyVerdict

from .helpers import FakeSafety, run


def test_retrievers_are_built_once_with_the_agents_settings(engine: ChatEngine) -> None:
    deps = engine.deps
    medical = deps.retriever(deps.agent("medical"))
    assert medical is deps.retriever(deps.agent("medical"))
    assert medical.config.gate_threshold == 0.35
    companion = deps.retriever(deps.agent("companion"))
    assert companion.config.top_k == 3 and companion.config.parents is False
    assert deps.retriever(deps.agent("tutor"), "medical").kb is medical.kb  # a KB opens once


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
