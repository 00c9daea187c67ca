"""The session-stickiness rules as pure functions, so they are easy to read and to test.

A conversation keeps its assigned agent. It is re-routed only when

1. the message contains a switch phrase (``supervisor.switch_phrases``, e.g. "switch topic"):
   the rest of the message is routed afresh; if nothing is left, the supervisor asks what to
   talk about and the next message is routed like a first message; or
2. the embedding router, run on the message alone every turn (cheap: one query embedding),
   picks a DIFFERENT agent with confidence ≥ ``supervisor.switch_confidence`` while the current
   agent scores at least ``supervisor.switch_margin`` lower.

Anything else, including vague follow-ups ("what about its side effects?") that match no
agent well, stays with the assigned agent."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_FILLER = re.compile(
    r"^(?:[\s,.;:!?\-–—]|\b(?:ok(?:ay)?|so|and|now|please|let'?s|lets|can we|could we|to|"
    r"i want to|i'd like to)\b)+",
    re.IGNORECASE,
)


def _clean(text: str) -> str:
    return _FILLER.sub("", text.strip()).strip(" ,.;:!-–—")


def split_switch(message: str, phrases: Sequence[str]) -> str | None:
    """``None`` when ``message`` contains no switch phrase; otherwise what is left to route
    (the text after the phrase, else the text before it; ``""`` when nothing is left)."""
    for phrase in sorted(phrases, key=len, reverse=True):
        match = re.search(rf"\b{re.escape(phrase)}\b", message, re.IGNORECASE)
        if match:
            after = _clean(message[match.end() :])
            before = _clean(message[: match.start()])
            return after or before
    return None


def should_reassign(
    agent: str,
    confidence: float,
    scores: Mapping[str, float],
    current: str,
    *,
    switch_confidence: float,
    margin: float,
) -> bool:
    """Rule 2 above. ``scores`` are the router's per-agent scores (an agent missing from them,
    e.g. a non-routable one, scores 0)."""
    if agent == current or confidence < switch_confidence:
        return False
    best = scores.get(agent, confidence)
    return scores.get(current, 0.0) <= best - margin


def agents_list(cards: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"- {name}: {description}" for name, description in cards)
