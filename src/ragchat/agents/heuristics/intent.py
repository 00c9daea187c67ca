"""Offline intent classification for the conversational-RAG agent: a canned template answer, a
clarifying question, or an ordinary information request.

1. Template: the best template's score = ``0.8 * max cosine to its examples + 0.2 * cosine to
   its description`` must reach ``threshold`` (0.65 suits all-MiniLM-L6-v2: paraphrases of an
   example score 0.68+, questions that merely share a word, like "what does a pediatrician
   do?" against "I need a pediatrician in my area", 0.3-0.64).
2. Clarification: the message, after resolving a follow-up against the history, names no topic
   ("help", "what should I do?", "is it bad?" with nothing for "it" to point at).
3. Otherwise "information".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragchat.agents.config import TemplateIntent
from ragchat.agents.heuristics.reformulate import (
    GENERIC,
    SOCIAL,
    VAGUE,
    is_follow_up,
    reference_word,
    reformulate,
    topic,
)
from ragchat.embed.base import Embedder
from ragchat.reader.text import words, wordset
from ragchat.types import HistoryMessage

INFORMATION = "information"
CLARIFICATION = "clarification"
TEMPLATE_THRESHOLD = 0.65
W_EXAMPLE = 0.8


@dataclass(frozen=True)
class IntentDecision:
    intent: str
    confidence: float
    reasoning: str


class IntentClassifier:
    def __init__(
        self,
        embedder: Embedder,
        templates: Mapping[str, TemplateIntent],
        *,
        threshold: float = TEMPLATE_THRESHOLD,
    ) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self._names = list(templates)
        texts: list[str] = []
        self._spans: list[tuple[int, int]] = []
        for name in self._names:
            t = templates[name]
            start = len(texts)
            texts.append(t.description)
            texts.extend(t.examples)
            self._spans.append((start, len(texts)))
        self._examples = {n: list(templates[n].examples) for n in self._names}
        self._vecs = (
            np.asarray(embedder.embed_documents(texts), dtype=np.float32) if texts else None
        )

    def _best_template(self, query: str) -> tuple[str, float, str]:
        if self._vecs is None:
            return "", 0.0, ""
        q = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        sims = self._vecs @ q
        best = ("", -1.0, "")
        for name, (start, end) in zip(self._names, self._spans, strict=True):
            ex = sims[start + 1 : end]
            i = int(np.argmax(ex))
            score = W_EXAMPLE * float(ex[i]) + (1 - W_EXAMPLE) * float(sims[start])
            if score > best[1]:
                best = (name, score, self._examples[name][i])
        return best

    def classify(self, query: str, history: Sequence[HistoryMessage] = ()) -> IntentDecision:
        name, score, example = self._best_template(query)
        if name and score >= self.threshold:
            confidence = min(1.0, 0.5 + (score - self.threshold) / (2 * (1 - self.threshold)))
            return IntentDecision(
                name,
                round(confidence, 4),
                f"similar to the {name!r} example {example!r} ({score:.2f} ≥ {self.threshold:.2f})",
            )
        vague, why = is_vague(query, history)
        if vague:
            return IntentDecision(CLARIFICATION, 0.8, why)
        note = f"; nearest template {name!r} only {score:.2f}" if name else ""
        confidence = 0.9 if not name else max(0.5, min(0.95, 1.0 - max(score, 0.0) / 2))
        return IntentDecision(INFORMATION, round(confidence, 4), f"a searchable question{note}")


def is_vague(query: str, history: Sequence[HistoryMessage] = ()) -> tuple[bool, str]:
    """(True, why) when the message names nothing to search for, even with the history."""
    tokens = [w.lower() for w in words(query)]
    if not tokens:
        return True, "the message is empty"
    if all(t in SOCIAL for t in tokens):
        return True, "a greeting or acknowledgement, not a question"
    resolved = reformulate(query, history) if is_follow_up(query, history) else query
    if topic(resolved):
        return False, "names a topic"
    if reference_word(query):
        return True, "refers to something ('it', 'that' ...) the conversation does not name"
    if all(t not in GENERIC or t in VAGUE for t in tokens):
        return True, "too short or general to search"
    return True, "asks about something without saying what (which medicine, topic ...)"


def clarifying_question(query: str, agent_description: str) -> str:
    """A friendly question asking for the specifics a vague message left out."""
    intro = "I'd like to help, but I need a little more to go on."
    scope = _first_person(agent_description.strip().rstrip("."))
    word = reference_word(query)
    if word:
        ask = (
            f"Could you tell me what \u201c{word}\u201d refers to \u2014 for example, which "
            "medicine, condition or topic you mean \u2014 and what you'd like to know about it?"
        )
    elif len(words(query)) <= 2:
        ask = "Could you tell me a bit more about what's going on and what you'd like to know?"
    else:
        ask = (
            "Could you give me a few more details, such as the specific topic, medicine or "
            "situation, and who it's for?"
        )
    return f"{intro} {ask}" + (f" ({scope}.)" if scope else "")


_VERBS_3RD = wordset(
    """answers helps explains provides gives offers covers supports tutors listens finds
    teaches guides shares"""
)


def _first_person(description: str) -> str:
    """ "Answers questions about X" → "I answer questions about X"; else "I can help with: …"."""
    if not description:
        return ""
    head, _, rest = description.partition(" ")
    low = head.lower()
    if low in _VERBS_3RD:
        verb = low[:-2] if low.endswith(("ches", "shes", "ses")) else low[:-1]
        return f"I {verb} {rest}".strip()
    return f"I can help with: {description[:1].lower()}{description[1:]}"
