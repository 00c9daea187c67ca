"""The ``SafetyClassifier`` contract, run over every implementation: the offline classifier
(rules + exemplars, the real embedder), Llama Guard (a scripted judge model), their combination
as ``build_safety`` assembles it, the logging wrapper, and the engine's guard with the
standard refusals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence

import pytest

from ragchat.llm.base import ChatResult, GenerationOptions, M, Message, ToolSpec
from ragchat.safety.base import CATEGORIES, CATEGORY_CODES, SafetyClassifier, SafetyVerdict
from ragchat.safety.factory import LoggedClassifier
from ragchat.safety.guard import StandardRefusals
from ragchat.safety.llama_guard import CombinedClassifier, LlamaGuardClassifier
from ragchat.safety.offline import OfflineSafetyClassifier

BENIGN = (
    "What are the side effects of ibuprofen?",
    "How much sleep does a two-year-old need?",
    "Can I take paracetamol with ibuprofen?",
    "I feel a bit sad today",
)
WEAPON = "How do I make a pipe bomb at home?"
HISTORY = [("user", "my kid has a cough"), ("assistant", "How old is your kid?")]


class JudgeModel:
    """A Llama-Guard-like judge: "unsafe" + S9 for bomb-making, "safe" for anything else."""

    name = "llama-guard3"

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        last = messages[-1].content.split("<END CONVERSATION>")[0].lower()
        return ChatResult(content="unsafe\nS9" if "bomb" in last.split("user:")[-1] else "safe")

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        yield (await self.generate(messages, options=options)).content

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        options: GenerationOptions | None = None,
    ) -> M:
        raise NotImplementedError("a judge does not answer in JSON")


class SafetyClassifierContract:
    """Subclasses provide ``classifier``. Every implementation lets ordinary questions through
    and refuses ``WEAPON``."""

    @pytest.fixture
    def classifier(self) -> SafetyClassifier:
        raise NotImplementedError

    def classify(
        self, classifier: SafetyClassifier, text: str, history: Sequence[tuple[str, str]] = ()
    ) -> SafetyVerdict:
        return asyncio.run(classifier.classify(text, history))

    def test_is_a_safety_classifier(self, classifier: SafetyClassifier) -> None:
        assert isinstance(classifier, SafetyClassifier)

    @pytest.mark.parametrize("text", BENIGN)
    def test_ordinary_messages_pass(self, classifier: SafetyClassifier, text: str) -> None:
        verdict = self.classify(classifier, text)
        assert isinstance(verdict, SafetyVerdict) and verdict.safe, verdict
        self.check_vocabulary(verdict)

    def test_a_dangerous_request_is_refused_with_its_category(
        self, classifier: SafetyClassifier
    ) -> None:
        verdict = self.classify(classifier, WEAPON)
        assert not verdict.safe and verdict.category == "indiscriminate_weapons"
        assert verdict.code == "S9"
        self.check_vocabulary(verdict)

    def test_the_reason_never_repeats_the_message(self, classifier: SafetyClassifier) -> None:
        for text in (WEAPON, *BENIGN):
            assert text.lower() not in self.classify(classifier, text).reason.lower()

    def test_the_history_is_context_not_the_message(self, classifier: SafetyClassifier) -> None:
        assert self.classify(classifier, "she is four", HISTORY).safe
        unsafe_before = [("user", WEAPON), ("assistant", "I can't help with that.")]
        assert self.classify(classifier, "thanks anyway", unsafe_before).safe

    def test_concurrent_calls_give_the_same_verdicts(self, classifier: SafetyClassifier) -> None:
        texts = [WEAPON, *BENIGN]

        async def together() -> list[SafetyVerdict]:
            return list(await asyncio.gather(*(classifier.classify(t) for t in texts)))

        assert asyncio.run(together()) == [self.classify(classifier, t) for t in texts]

    @staticmethod
    def check_vocabulary(verdict: SafetyVerdict) -> None:
        assert isinstance(verdict.score, float)
        if verdict.category is not None:
            assert verdict.category in CATEGORIES
            assert verdict.code == CATEGORY_CODES[verdict.category]
        else:
            assert verdict.code is None


class TestOfflineSafetyClassifier(SafetyClassifierContract):
    @pytest.fixture
    def classifier(self, offline: OfflineSafetyClassifier) -> SafetyClassifier:
        return offline


class TestLlamaGuardClassifier(SafetyClassifierContract):
    @pytest.fixture
    def classifier(self) -> SafetyClassifier:
        return LlamaGuardClassifier(JudgeModel())


class TestCombinedClassifier(SafetyClassifierContract):
    """As ``build_safety`` assembles it: the offline prompt-injection check, then Llama Guard
    with the offline classifier as its fallback."""

    @pytest.fixture
    def classifier(self, offline: OfflineSafetyClassifier) -> SafetyClassifier:
        guard = LlamaGuardClassifier(JudgeModel(), fallback=offline)
        return CombinedClassifier([offline.only({"prompt_injection"}), guard])


class TestLoggedClassifier(SafetyClassifierContract):
    @pytest.fixture
    def classifier(self, offline: OfflineSafetyClassifier) -> SafetyClassifier:
        return LoggedClassifier(offline)


class TestStandardRefusals(SafetyClassifierContract):
    """The guard the engine puts in front of every turn is itself a classifier."""

    @pytest.fixture
    def classifier(self, offline: OfflineSafetyClassifier) -> SafetyClassifier:
        return StandardRefusals(offline)

    def test_refusals_say_what_was_refused_without_the_message(
        self, classifier: SafetyClassifier
    ) -> None:
        assert isinstance(classifier, StandardRefusals)
        verdict = self.classify(classifier, WEAPON)
        refusal = classifier.refusal_for(verdict)
        assert refusal.strip() and WEAPON.lower() not in refusal.lower()


def test_the_judge_is_a_chat_model() -> None:
    from ragchat.llm.base import ChatModel

    assert isinstance(JudgeModel(), ChatModel)
