"""Whether a reply answers, and which named decision said so. Every refusal names one: the
trained reader (with its probability and threshold), a hand-written check from
``reader/checks.py``, the relevance gate, or the chat model's own NO_ANSWER; the turn's
metadata carries it, so a wrong refusal can be traced to the component that made it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AnswerDecision:
    answered: bool
    by: str  # "reader", "check:<name>", "gate", "model", "no passages", "selection", "rules"
    p_answerable: float | None = None
    threshold: float | None = None

    def __str__(self) -> str:
        if self.p_answerable is None or self.threshold is None:
            return self.by
        sign = ">=" if self.p_answerable >= self.threshold else "<"
        return f"{self.by}: P(answerable) {self.p_answerable:.2f} {sign} {self.threshold:.2f}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answered": self.answered, "by": self.by}
        if self.p_answerable is not None:
            out["p_answerable"] = round(float(self.p_answerable), 4)
        if self.threshold is not None:
            out["threshold"] = round(float(self.threshold), 4)
        return out


def refused(by: str, p: float | None = None, threshold: float | None = None) -> AnswerDecision:
    return AnswerDecision(False, by, p, threshold)


def answered(by: str, p: float | None = None, threshold: float | None = None) -> AnswerDecision:
    return AnswerDecision(True, by, p, threshold)
