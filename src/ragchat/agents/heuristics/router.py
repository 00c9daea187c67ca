"""Offline intent routing: which agent should answer a message, by embedding similarity to each
agent's description and example utterances plus a few keyword hints.

Per agent::

    similarity = W_EXAMPLE * max cosine(message, example) + (1 - W_EXAMPLE) * cosine(message,
                 description)
    score      = similarity + W_KEYWORD * share of the message's content words that are
                 keywords of this agent only (words of its description and examples that no
                 other agent uses)

Confidence is the softmax probability of the best agent over all scores at ``TEMPERATURE``
(0.05: a 0.1 lead over a single rival gives ~0.88, a 0.03 lead ~0.65, a tie 0.5 or less), times
a strength factor rising linearly from 0 at ``FLOOR_SCORE`` to 1 at ``STRONG_SCORE``: a message
that resembles no agent ("hello", "thanks") gets a low confidence even when one agent is
slightly ahead, so the supervisor can fall back to its default agent.

A follow-up ("what about for kids?") carries too little to route on, so its scores are blended
with those of the previous user message (``W_HISTORY``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragchat.agents.heuristics.reformulate import is_follow_up
from ragchat.embed.base import Embedder
from ragchat.reader.text import WEAK_STEMS, content_stems
from ragchat.types import HistoryMessage

W_EXAMPLE = 0.7
W_KEYWORD = 0.15
W_HISTORY = 0.4
TEMPERATURE = 0.05
FLOOR_SCORE = 0.15
STRONG_SCORE = 0.4
WEAK_SCORE = 0.3  # below this the reasoning says so


@dataclass(frozen=True)
class AgentCard:
    name: str
    description: str
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class RouteDecision:
    agent: str
    confidence: float
    reasoning: str
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class _Card:
    card: AgentCard
    desc_vec: np.ndarray
    example_vecs: np.ndarray  # (n_examples, dim); may be empty
    keywords: set[str]


class EmbeddingRouter:
    """Routes by similarity to agent cards; card embeddings are computed once at init."""

    def __init__(self, embedder: Embedder, agents: Sequence[AgentCard]) -> None:
        if not agents:
            raise ValueError("EmbeddingRouter needs at least one agent")
        self.embedder = embedder
        texts: list[str] = []
        for a in agents:
            texts.append(a.description or a.name)
            texts.extend(a.examples)
        vecs = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        vocab = {a.name: self._vocab(a) for a in agents}
        self._cards: list[_Card] = []
        row = 0
        for a in agents:
            n = len(a.examples)
            others = set().union(*(v for k, v in vocab.items() if k != a.name))
            self._cards.append(
                _Card(a, vecs[row], vecs[row + 1 : row + 1 + n], vocab[a.name] - others)
            )
            row += 1 + n

    @staticmethod
    def _vocab(card: AgentCard) -> set[str]:
        stems = content_stems(" ".join((card.name, card.description, *card.examples)))
        return {s for s in stems if s not in WEAK_STEMS and len(s) > 2}

    @property
    def agents(self) -> list[str]:
        return [c.card.name for c in self._cards]

    def _scores(self, message: str) -> tuple[dict[str, float], dict[str, tuple[str, float]]]:
        q = np.asarray(self.embedder.embed_query(message), dtype=np.float32)
        stems = {s for s in content_stems(message) if s not in WEAK_STEMS}
        scores: dict[str, float] = {}
        nearest: dict[str, tuple[str, float]] = {}
        for c in self._cards:
            desc = float(c.desc_vec @ q)
            if len(c.example_vecs):
                sims = c.example_vecs @ q
                best = int(np.argmax(sims))
                ex = float(sims[best])
                sim = W_EXAMPLE * ex + (1 - W_EXAMPLE) * desc
                nearest[c.card.name] = (c.card.examples[best], ex)
            else:
                sim = desc
                nearest[c.card.name] = (c.card.description, desc)
            hint = len(stems & c.keywords) / len(stems) if stems else 0.0
            scores[c.card.name] = sim + W_KEYWORD * hint
        return scores, nearest

    def route(self, message: str, history: Sequence[HistoryMessage] = ()) -> RouteDecision:
        scores, nearest = self._scores(message)
        previous = next((m.content for m in reversed(history) if m.role == "user"), "")
        blended = False
        if previous and is_follow_up(message, history):
            before, _ = self._scores(previous)
            scores = {k: (1 - W_HISTORY) * v + W_HISTORY * before[k] for k, v in scores.items()}
            blended = True
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        best, best_score = ranked[0]
        confidence = _confidence([s for _, s in ranked], best_score)
        example, sim = nearest[best]
        reasoning = f"closest to {best!r} examples such as {example!r} ({sim:.2f})"
        if len(ranked) > 1:
            reasoning += f"; score {best_score:.2f} vs {ranked[1][0]!r} {ranked[1][1]:.2f}"
        if blended:
            reasoning += "; follow-up, so the previous question was taken into account"
        if best_score < WEAK_SCORE:
            reasoning += "; the message resembles no agent strongly"
        return RouteDecision(
            agent=best,
            confidence=round(confidence, 4),
            reasoning=reasoning,
            scores={k: round(v, 4) for k, v in scores.items()},
        )


def _confidence(scores: Sequence[float], best: float) -> float:
    """Softmax probability of the best score, scaled by how strong the best score is."""
    top = max(scores)
    exps = [math.exp((s - top) / TEMPERATURE) for s in scores]
    p_best = math.exp((best - top) / TEMPERATURE) / sum(exps)
    strength = min(1.0, max(0.0, (best - FLOOR_SCORE) / (STRONG_SCORE - FLOOR_SCORE)))
    return max(0.0, min(1.0, p_best * strength))
