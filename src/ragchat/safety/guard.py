"""The safety stage as the engine's supervisor sees it: a classifier plus the message shown when
it refuses. A bare ``SafetyClassifier`` gets the standard refusals (``responses.py``); a guard
of its own (tests, deployments with their own wording) is used as it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ragchat.safety.base import SafetyClassifier, SafetyVerdict
from ragchat.safety.responses import refusal_for


@runtime_checkable
class SafetyGuard(Protocol):
    async def classify(
        self, text: str, history: Sequence[tuple[str, str]] = ()
    ) -> SafetyVerdict: ...

    def refusal_for(self, verdict: SafetyVerdict) -> str: ...


class StandardRefusals:
    """A ``SafetyClassifier`` with the standard refusal messages."""

    def __init__(self, classifier: SafetyClassifier) -> None:
        self.classifier = classifier

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        return await self.classifier.classify(text, history)

    def refusal_for(self, verdict: SafetyVerdict) -> str:
        return refusal_for(verdict)


def as_guard(safety: SafetyClassifier | SafetyGuard | None) -> SafetyGuard | None:
    if safety is None or isinstance(safety, SafetyGuard):
        return safety
    return StandardRefusals(safety)
