"""Contracts of the safety stage: the verdict every classifier returns, the classifier protocol,
and the category vocabulary (our keys ↔ Llama Guard 3 hazard codes S1–S14).

Every user message is classified before any agent runs. ``SafetyVerdict.safe`` is the decision;
``category``/``code`` say what was detected (on a safe verdict they are set only when something
was detected that is not blocked, e.g. S6 "specialized advice" on a medical question)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

# Our category key → Llama Guard 3 code. ``prompt_injection`` is ours (Llama Guard has none).
CATEGORY_CODES: dict[str, str | None] = {
    "violent_crimes": "S1",
    "non_violent_crimes": "S2",
    "sex_crimes": "S3",
    "child_sexual_exploitation": "S4",
    "defamation": "S5",
    "specialized_advice": "S6",
    "privacy": "S7",
    "intellectual_property": "S8",
    "indiscriminate_weapons": "S9",
    "hate": "S10",
    "self_harm": "S11",
    "sexual_content": "S12",
    "elections": "S13",
    "code_interpreter_abuse": "S14",
    "prompt_injection": None,
}
CODE_CATEGORIES: dict[str, str] = {code: key for key, code in CATEGORY_CODES.items() if code}
CATEGORIES: frozenset[str] = frozenset(CATEGORY_CODES)

# A medical / parenting assistant must answer ordinary health questions, which Llama Guard files
# under S6; so S6 is allowed unless a deployment blocks it explicitly.
DEFAULT_BLOCKED: frozenset[str] = CATEGORIES - {"specialized_advice"}

# When several categories are detected at once, report the one whose response matters most
# (self-harm first, so the person gets the supportive message and crisis resources).
SEVERITY_ORDER: tuple[str, ...] = (
    "self_harm",
    "child_sexual_exploitation",
    "indiscriminate_weapons",
    "violent_crimes",
    "sex_crimes",
    "prompt_injection",
    "hate",
    "sexual_content",
    "non_violent_crimes",
    "code_interpreter_abuse",
    "privacy",
    "defamation",
    "elections",
    "intellectual_property",
    "specialized_advice",
)


def validate_categories(categories: Iterable[str]) -> frozenset[str]:
    """The given category keys as a frozenset; unknown keys raise ``ValueError``."""
    result = frozenset(categories)
    unknown = result - CATEGORIES
    if unknown:
        raise ValueError(
            f"unknown safety categories {sorted(unknown)}; known: {sorted(CATEGORIES)}"
        )
    return result


def most_severe(categories: Iterable[str]) -> str:
    """The first of ``categories`` in ``SEVERITY_ORDER`` (which lists every category)."""
    present = set(categories)
    for key in SEVERITY_ORDER:
        if key in present:
            return key
    raise ValueError("no category given")


@dataclass(frozen=True)
class SafetyVerdict:
    """``score`` is the classifier's confidence in ``category`` (1.0 for a rule or a Llama Guard
    label, the cosine similarity for an embedding match). ``reason`` never contains the user's
    text, so it can be logged."""

    safe: bool
    category: str | None = None
    code: str | None = None
    score: float = 0.0
    reason: str = ""

    @classmethod
    def allow(
        cls, reason: str = "", *, score: float = 0.0, category: str | None = None
    ) -> SafetyVerdict:
        code = CATEGORY_CODES.get(category) if category else None
        return cls(True, category, code, score, reason)

    @classmethod
    def block(cls, category: str | None, *, score: float = 1.0, reason: str = "") -> SafetyVerdict:
        code = CATEGORY_CODES.get(category) if category else None
        return cls(False, category, code, score, reason)


@runtime_checkable
class SafetyClassifier(Protocol):
    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        """Judge ``text`` (the latest user message); ``history`` is the earlier conversation
        as ``(role, content)`` pairs, oldest first, roles ``"user"``/``"assistant"``."""
        ...
