"""Offline safety classifier: phrase rules plus embedding evidence from exemplars. No LLM.

A category fires when one of its rules matches (``ragchat.safety.rules``), or on embedding
evidence, scored one of two ways:

- ``scoring="linear"`` (default): a softmax-regression head fitted on the same exemplars
  (categories plus ``safe``) at start-up; the category fires when its probability reaches
  ``linear_threshold`` (``linear_thresholds`` per category) on a segment at least
  ``linear_floor`` similar to one of its exemplars. On unseen messages
  (``tests/safety/holdout.yaml``) it caught clearly more than nearest-exemplar similarity at
  the same false-positive rate.
- ``scoring="similarity"``: the message's best cosine similarity to the category's
  exemplars is at least the threshold AND beats its best similarity to the safe
  counter-exemplars by the margin (``threshold``/``margin``/``thresholds``/``margins``).

Messages with several sentences are also scored sentence by sentence, so an injection appended
to a harmless question still stands out. Exemplars live in ``data/exemplars.yaml``; the defaults
below were calibrated with all-MiniLM-L6-v2 on ``tests/safety/labelled.yaml``. The evidence
itself (exemplars, the softmax head, ``MessageScores``) is computed in ``evidence``."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.safety.base import DEFAULT_BLOCKED, SafetyVerdict, most_severe, validate_categories
from ragchat.safety.evidence import (
    EXEMPLARS_PATH,
    ORDINARY_WEIGHT,
    SCREENS_WEIGHT,
    Exemplars,
    FloatArray,
    MessageScores,
    _embed_exemplars,
    _fit_softmax,
    _segments,
    _softmax,
    load_exemplars,
)
from ragchat.safety.overdose import CONTEXT_TURNS, OverdoseIntent
from ragchat.safety.responses import crisis_resources, refusal_for, unsafe_input
from ragchat.safety.rules import match_rules, self_harm_context

__all__ = [
    "CATEGORY_LINEAR_THRESHOLDS",
    "CATEGORY_MARGINS",
    "CATEGORY_THRESHOLDS",
    "DEFAULT_LINEAR_FLOOR",
    "DEFAULT_LINEAR_THRESHOLD",
    "DEFAULT_MARGIN",
    "DEFAULT_THRESHOLD",
    "EXEMPLARS_PATH",
    "Exemplars",
    "MessageScores",
    "OfflineSafetyClassifier",
    "Scoring",
    "crisis_resources",
    "load_exemplars",
    "refusal_for",
    "unsafe_input",
]

Scoring = Literal["similarity", "linear"]
DEFAULT_THRESHOLD = 0.40
DEFAULT_MARGIN = 0.15
# Self-harm favours recall (a false alarm shows a supportive message, a miss shows none);
# violent exemplars sit close to everyday hyperbole ("I could strangle him"), so they need more.
CATEGORY_THRESHOLDS: dict[str, float] = {"self_harm": 0.35}
CATEGORY_MARGINS: dict[str, float] = {"violent_crimes": 0.20}
DEFAULT_LINEAR_THRESHOLD = 0.45
# Under linear scoring, ordinary sadness, loneliness and stress sit right next to self-harm, and
# a false alarm is not harmless there: the support agent's user gets a crisis script instead of
# an answer. Explicit intent is caught by the rules whatever the threshold. On the calibration
# set 0.45 and 0.50 caught the same self-harm messages; at 0.45 two of the 42 everyday-distress
# messages in tests/safety/distress.yaml were refused, at 0.50 none.
# Violent crimes and prompt injection, whose heads also learn from the corpus's screens
# (``SCREENS_PATH``), need 0.50: on the corpus's val split (benchmarks/safety_ordinary.py) the
# heads then caught 17 of 24 meant messages against 14, with 8 false alarms on 1,182 ordinary
# messages against 9.
CATEGORY_LINEAR_THRESHOLDS: dict[str, float] = {
    "self_harm": 0.50,
    "violent_crimes": 0.50,
    "prompt_injection": 0.50,
}
# The softmax always shares out all its probability, so a text unlike every exemplar (a
# surgical study title) can still land on a category. Linear scoring also needs the segment to
# be at least this similar to one of the category's exemplars; on the calibration set the
# least similar message the head rightly caught scored 0.35.
DEFAULT_LINEAR_FLOOR = 0.25

# How many earlier user turns are read for context (self-harm follow-ups).
_CONTEXT_TURNS = CONTEXT_TURNS


class OfflineSafetyClassifier:
    """``threshold``/``margin`` apply to every category under similarity scoring;
    ``thresholds``/``margins`` override them per category (``None`` → the calibrated defaults,
    ``{}`` → none); ``linear_threshold``/``linear_thresholds`` do the same under linear
    scoring, where ``linear_floor`` is the least exemplar similarity. ``blocked`` is the set
    of categories that make a message unsafe (detected but unblocked categories are reported
    on a safe verdict). ``overdose`` adds the overdose-intent detector (``overdose.py``) to
    self-harm: ``True`` builds it with the defaults (over the same exemplars), ``False``
    leaves it out."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        margin: float = DEFAULT_MARGIN,
        thresholds: Mapping[str, float] | None = None,
        margins: Mapping[str, float] | None = None,
        scoring: Scoring = "linear",
        linear_threshold: float = DEFAULT_LINEAR_THRESHOLD,
        linear_thresholds: Mapping[str, float] | None = None,
        linear_floor: float = DEFAULT_LINEAR_FLOOR,
        blocked: Iterable[str] = DEFAULT_BLOCKED,
        exemplars: Exemplars | Path | None = None,
        sentences: bool = True,
        overdose: OverdoseIntent | bool = True,
    ) -> None:
        if scoring not in ("similarity", "linear"):
            raise ValueError(f"unknown scoring {scoring!r}; use 'similarity' or 'linear'")
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.thresholds = dict(CATEGORY_THRESHOLDS if thresholds is None else thresholds)
        self.margins = dict(CATEGORY_MARGINS if margins is None else margins)
        self.scoring: Scoring = scoring
        self.linear_threshold = linear_threshold
        self.linear_floor = linear_floor
        self.linear_thresholds = dict(
            CATEGORY_LINEAR_THRESHOLDS if linear_thresholds is None else linear_thresholds
        )
        validate_categories([*self.thresholds, *self.margins, *self.linear_thresholds])
        self.blocked = validate_categories(blocked)
        self.active: frozenset[str] | None = None  # None = every category with exemplars
        self.sentences = sentences
        if not isinstance(exemplars, Exemplars):
            exemplars = load_exemplars(exemplars)
        self.exemplars = exemplars
        self._keys = tuple(exemplars.categories)
        # (category, text, weight in the head's fit), in ``head_examples`` order: the
        # hand-written exemplars, then the corpus's screen examples at ``SCREENS_WEIGHT``.
        examples = [
            (key, text, weight)
            for key in self._keys
            for group, weight in (
                (exemplars.categories[key], 1.0),
                (exemplars.screens.get(key, ()), SCREENS_WEIGHT),
            )
            for text in group
        ]
        texts = [text for _, text, _ in examples]
        owners = [key for key, _, _ in examples]
        safe = (*exemplars.safe, *exemplars.ordinary)
        matrix = _embed_exemplars(embedder, (*texts, *safe))
        self._matrix = matrix[: len(texts)]
        self._safe = matrix[len(texts) :]
        self._everyday = (
            _embed_exemplars(embedder, exemplars.everyday) if exemplars.everyday else None
        )
        self._rows = {k: np.array([i for i, o in enumerate(owners) if o == k]) for k in self._keys}
        # Linear head classes: the categories in order, then "safe".
        labels = np.array(
            [self._keys.index(o) for o in owners] + [len(self._keys)] * len(safe),
            dtype=np.int64,
        )
        self._head: tuple[FloatArray, FloatArray] | None = None
        if scoring == "linear":
            weights = np.array([w for _, _, w in examples] + [1.0] * len(safe))
            if exemplars.ordinary:
                share = ORDINARY_WEIGHT * len(exemplars.safe) / len(exemplars.ordinary)
                weights[len(texts) + len(exemplars.safe) :] = min(1.0, share)
            self._head = _fit_softmax(matrix, labels, len(self._keys) + 1, weights=weights)
        if overdose is True:
            overdose = OverdoseIntent(embedder, exemplars=exemplars)
        self.overdose: OverdoseIntent | None = overdose or None

    # -- configuration ---------------------------------------------------------------------

    def with_blocked(self, blocked: Iterable[str]) -> OfflineSafetyClassifier:
        """A view with another blocking policy, sharing the embedded exemplars."""
        view = copy.copy(self)
        view.blocked = validate_categories(blocked)
        return view

    def only(self, categories: Iterable[str]) -> OfflineSafetyClassifier:
        """A view that detects (and blocks, if blocked here) only ``categories``, sharing the
        embedded exemplars: e.g. prompt injection next to Llama Guard, which has no such
        category."""
        view = copy.copy(self)
        view.active = validate_categories(categories)
        return view

    def threshold_for(self, category: str) -> float:
        return self.thresholds.get(category, self.threshold)

    def linear_threshold_for(self, category: str) -> float:
        return self.linear_thresholds.get(category, self.linear_threshold)

    def margin_for(self, category: str) -> float:
        return self.margins.get(category, self.margin)

    @property
    def categories(self) -> frozenset[str]:
        """Categories with exemplars (the rules cover the same ones)."""
        return frozenset(self._keys)

    # -- scoring -----------------------------------------------------------------------------

    def score_many(
        self, texts: Sequence[str], contexts: Sequence[Sequence[str]] | None = None
    ) -> list[MessageScores]:
        """Raw evidence for many messages with one embedding call (also used to calibrate);
        ``contexts[i]`` are the earlier user turns of message i, read by the overdose
        detector."""
        segments = [_segments(t) if self.sentences else [t.strip()] for t in texts]
        flat = [s for segs in segments for s in segs]
        vectors = np.asarray(self.embedder.embed_documents(flat), np.float32) if flat else None
        out: list[MessageScores] = []
        offset = 0
        for text, segs in zip(texts, segments, strict=True):
            scores = MessageScores()
            for rule in match_rules(text, self._keys):
                scores.rules.setdefault(rule.category, []).append(rule.name)
            if vectors is not None:
                self._embedding_evidence(scores, vectors[offset : offset + len(segs)])
            offset += len(segs)
            out.append(scores)
        if self.overdose is not None and (self.active is None or "self_harm" in self.active):
            evidence = self.overdose.score_many(texts, contexts)
            out = [replace(s, overdose=e) for s, e in zip(out, evidence, strict=True)]
        return out

    def _embedding_evidence(self, scores: MessageScores, block: FloatArray) -> None:
        sims = block @ self._matrix.T
        if len(self._safe):
            safe = (block @ self._safe.T).max(axis=1)
        else:
            safe = np.full(len(block), -1.0, dtype=np.float32)
        probs = _softmax(block @ self._head[0] + self._head[1]) if self._head else None
        if self._everyday is not None:
            scores.everyday.extend(float(s) for s in (block @ self._everyday.T).max(axis=1))
        for i, key in enumerate(self._keys):
            cat = sims[:, self._rows[key]]
            scores.pairs[key] = [
                (float(c), float(s)) for c, s in zip(cat.max(axis=1), safe, strict=True)
            ]
            scores.exemplar[key] = int(np.unravel_index(cat.argmax(), cat.shape)[1])
            if probs is not None:
                scores.probs[key] = [float(p) for p in probs[:, i]]

    def decide(
        self,
        scores: MessageScores,
        *,
        threshold: float | None = None,
        margin: float | None = None,
    ) -> SafetyVerdict:
        """The verdict for raw evidence. ``threshold``/``margin`` override every category's
        value (``threshold`` is the probability cut-off under linear scoring); for calibration."""
        fired: dict[str, tuple[float, str]] = {}
        for category, names in scores.rules.items():
            fired[category] = (1.0, f"rule {category}:{names[0]}")
        if scores.context and "self_harm" not in fired:
            fired["self_harm"] = (1.0, "rule self_harm:follow-up after self-harm in this chat")
        if "self_harm" not in fired and scores.overdose is not None and self.overdose:
            hit = self.overdose.decide(scores.overdose)
            if hit is not None:
                fired["self_harm"] = (
                    hit[0],
                    f"overdose intent {hit[0]:.2f} ({hit[1]}) with medication context",
                )
        if self.active is not None:
            fired = {c: v for c, v in fired.items() if c in self.active}
        for category in self._keys:
            if category in fired or (self.active is not None and category not in self.active):
                continue
            hit = self._embedding_fires(scores, category, threshold, margin)
            if hit is not None:
                fired[category] = hit
        blocked = [c for c in fired if c in self.blocked]
        if blocked:
            category = most_severe(blocked)
            score, reason = fired[category]
            return SafetyVerdict.block(category, score=score, reason=f"offline: {reason}")
        if fired:
            category = most_severe(fired)
            score, reason = fired[category]
            return SafetyVerdict.allow(
                f"offline: {reason} (not blocked)", score=score, category=category
            )
        keys = [k for k in self._keys if self.active is None or k in self.active]
        if self.scoring == "linear":
            top = max((scores.probability(c) for c in keys), default=0.0)
        else:
            top = max((scores.best(c) for c in keys), default=0.0)
        return SafetyVerdict.allow("offline: no rule or exemplar match", score=top)

    def _embedding_fires(
        self,
        scores: MessageScores,
        category: str,
        threshold: float | None,
        margin: float | None,
    ) -> tuple[float, str] | None:
        if category not in scores.pairs:
            return None
        if self.scoring == "linear":
            limit = self.linear_threshold_for(category) if threshold is None else threshold
            p = scores.linear_fires(category, limit, self.linear_floor)
            if p is None:
                return None
            return p, f"linear {category}: probability {p:.2f}"
        limit = self.threshold_for(category) if threshold is None else threshold
        gap = self.margin_for(category) if margin is None else margin
        sim = scores.fires(category, limit, gap)
        if sim is None:
            return None
        exemplar = self.exemplars.head_examples(category)[scores.exemplar[category]]
        safe_best = max(s for _, s in scores.pairs[category])
        return sim, (
            f"embedding {category}: similarity {sim:.2f} (safe {safe_best:.2f}) "
            f"to exemplar {exemplar!r}"
        )

    def classify_sync(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        user_turns = [c for role, c in history if role == "user"][-_CONTEXT_TURNS:]
        scores = self.score_many([text], [user_turns])[0]
        watching = self.active is None or "self_harm" in self.active
        followed = user_turns and watching and "self_harm" in self.blocked
        if followed and self_harm_context(text, user_turns):
            scores = replace(scores, context=True)
        return self.decide(scores)

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        # Embedding is CPU work (~10 ms); keep it off the event loop.
        return await asyncio.to_thread(self.classify_sync, text, history)
