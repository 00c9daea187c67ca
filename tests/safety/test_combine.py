"""StrictestOf: every classifier judges the message and the strictest verdict wins."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from ragchat.safety.base import SafetyVerdict
from ragchat.safety.combine import StrictestOf, strictest


class Fixed:
    def __init__(self, verdict: SafetyVerdict | BaseException) -> None:
        self.verdict = verdict
        self.seen: list[tuple[str, list[tuple[str, str]]]] = []

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        self.seen.append((text, list(history)))
        if isinstance(self.verdict, BaseException):
            raise self.verdict
        return self.verdict


SAFE = SafetyVerdict.allow("guard: safe")
SELF_HARM = SafetyVerdict.block("self_harm", reason="offline: overdose intent")
VIOLENT = SafetyVerdict.block("violent_crimes", reason="guard: S1")
UNKNOWN = SafetyVerdict.block(None, reason="guard: unsafe (codes S99)")


def _run(*parts: Fixed) -> SafetyVerdict:
    return asyncio.run(StrictestOf(parts).classify("msg", [("user", "earlier")]))


def test_unsafe_beats_safe_in_either_order() -> None:
    assert _run(Fixed(SAFE), Fixed(SELF_HARM)).category == "self_harm"
    assert _run(Fixed(SELF_HARM), Fixed(SAFE)).category == "self_harm"


def test_the_more_severe_category_wins_and_reasons_are_kept() -> None:
    verdict = _run(Fixed(VIOLENT), Fixed(SELF_HARM))
    assert verdict.category == "self_harm" and verdict.code == "S11"
    assert "overdose intent" in verdict.reason and "guard: S1" in verdict.reason


def test_a_known_category_beats_unsafe_without_one() -> None:
    assert _run(Fixed(UNKNOWN), Fixed(VIOLENT)).category == "violent_crimes"
    only_unknown = _run(Fixed(UNKNOWN), Fixed(SAFE))
    assert not only_unknown.safe and only_unknown.category is None


def test_all_safe_merges_reasons_and_keeps_a_detected_category() -> None:
    advice = SafetyVerdict.allow("offline: S6", score=0.9, category="specialized_advice")
    verdict = _run(Fixed(SAFE), Fixed(advice))
    assert verdict.safe and verdict.category == "specialized_advice" and verdict.score == 0.9
    assert verdict.reason == "guard: safe; offline: S6"


def test_every_classifier_sees_the_message_and_history() -> None:
    parts = [Fixed(SAFE), Fixed(SAFE)]
    _run(*parts)
    assert all(p.seen == [("msg", [("user", "earlier")])] for p in parts)


def test_failures_are_skipped_unless_all_fail() -> None:
    assert _run(Fixed(RuntimeError("down")), Fixed(SELF_HARM)).category == "self_harm"
    with pytest.raises(RuntimeError):
        _run(Fixed(RuntimeError("down")))
    with pytest.raises(AssertionError):  # a failing test double is not a model error
        _run(Fixed(AssertionError("boom")), Fixed(SAFE))


def test_needs_a_classifier_and_a_verdict() -> None:
    with pytest.raises(ValueError):
        StrictestOf([])
    with pytest.raises(ValueError):
        strictest([])
