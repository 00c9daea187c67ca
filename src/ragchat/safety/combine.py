"""``StrictestOf``: several classifiers judge every message and the strictest verdict wins.

With a moderation model configured, Llama Guard and the offline classifier both run: each
catches things the other misses (Llama Guard has no prompt-injection category and reads
euphemism better; the offline detector catches overdose intent asked as a dosing question).
An unsafe verdict beats a safe one; between unsafe verdicts the more severe category wins
(``SEVERITY_ORDER``: self-harm first, so the person gets the crisis resources), and a verdict
with a category beats "unsafe, category unknown"."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from ragchat.safety.base import SEVERITY_ORDER, SafetyClassifier, SafetyVerdict

log = logging.getLogger(__name__)


def _rank(verdict: SafetyVerdict) -> tuple[int, int]:
    """Sort key, smallest = strictest."""
    if verdict.safe:
        return (2, 0)
    if verdict.category in SEVERITY_ORDER:
        return (0, SEVERITY_ORDER.index(verdict.category))
    return (1, 0)


def strictest(verdicts: Sequence[SafetyVerdict]) -> SafetyVerdict:
    """The strictest verdict; when all are safe, one safe verdict that keeps the first
    detected (unblocked) category, the highest score and every reason."""
    if not verdicts:
        raise ValueError("no verdict given")
    ordered = sorted(enumerate(verdicts), key=lambda item: (_rank(item[1]), item[0]))
    first = ordered[0][1]
    if not first.safe:
        others = [v.reason for v in verdicts if v is not first and not v.safe and v.reason]
        if not others:
            return first
        reason = f"{first.reason} (also: {'; '.join(others)})"
        return SafetyVerdict(False, first.category, first.code, first.score, reason)
    flagged = next((v for v in verdicts if v.category), None)
    return SafetyVerdict(
        True,
        flagged.category if flagged else None,
        flagged.code if flagged else None,
        max(v.score for v in verdicts),
        "; ".join(v.reason for v in verdicts if v.reason),
    )


async def gather_verdicts(
    classifiers: Sequence[SafetyClassifier], text: str, history: Sequence[tuple[str, str]]
) -> list[SafetyVerdict]:
    """Every classifier's verdict, run concurrently. One that raises is logged and left out; if
    all raise, the first error propagates. Failing test doubles (``AssertionError``) and
    cancellation are never swallowed."""
    results = await asyncio.gather(
        *(c.classify(text, history) for c in classifiers), return_exceptions=True
    )
    verdicts: list[SafetyVerdict] = []
    errors: list[Exception] = []
    for classifier, result in zip(classifiers, results, strict=True):
        if isinstance(result, SafetyVerdict):
            verdicts.append(result)
        elif isinstance(result, Exception) and not isinstance(result, AssertionError):
            log.error("safety: %s failed: %r", type(classifier).__name__, result)
            errors.append(result)
        else:
            raise result
    if not verdicts:
        raise errors[0]
    return verdicts


class StrictestOf:
    """Runs every classifier concurrently; the strictest verdict wins. A classifier that
    raises is logged and left out; if all raise, the first error propagates. Failing test
    doubles (``AssertionError``) and cancellation are never swallowed."""

    def __init__(self, classifiers: Sequence[SafetyClassifier]) -> None:
        if not classifiers:
            raise ValueError("StrictestOf needs at least one classifier")
        self.classifiers = tuple(classifiers)

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        return strictest(await gather_verdicts(self.classifiers, text, history))
