"""The offline classifier's embedding evidence, before any threshold: the exemplars and
their cached embeddings, the softmax head fitted on them, and ``MessageScores``, the raw
per-message evidence that ``OfflineSafetyClassifier.decide`` (and calibration in
``ragchat.safety.evaluate``) turns into a verdict."""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from ragchat.embed.base import Embedder
from ragchat.safety.base import validate_categories

FloatArray = npt.NDArray[np.float32]

EXEMPLARS_PATH = Path(__file__).parent / "data" / "exemplars.yaml"
# Ordinary messages people send about their own documents that the heads took for something
# alarming: mined from the user-documents corpus's train split (benchmarks/safety_ordinary.py)
# and fitted as safe examples with the default exemplars.
ORDINARY_PATH = Path(__file__).parent / "data" / "ordinary.yaml"
# The train split of corpus/screens.jsonl (benchmarks/safety_ordinary.py --screens): messages
# about people's own documents that mean it (self-harm, threats, attacks on the assistant)
# join the head's category examples; everyday idioms that only sound like them ("my mum will
# kill me", "bored to death") join the everyday look-alikes. Written apart from the calibration
# and hold-out sets, so those still measure the head on messages it never saw.
SCREENS_PATH = Path(__file__).parent / "data" / "screens.yaml"
# Each screen example weighs this much against a hand-written exemplar in the head's fit.
SCREENS_WEIGHT = 0.5
# Together the ordinary examples weigh this share of the hand-written safe exemplars in the
# head's fit: enough to move the boundary off everyday document questions, not so much that
# the safe class's prior swamps the categories' few exemplars.
ORDINARY_WEIGHT = 0.5

# How similar a sentence must be to an everyday look-alike before that can outweigh a
# category's exemplars (``MessageScores.ordinary``). Swept on the dev sets only
# (tests/safety/lookalikes.dev.yaml, labelled.yaml, distress.yaml): from 0.35 to 0.45 the dev
# look-alikes refused fell from 9/89 (no veto) to 0 with no change on the labelled set; at
# 0.50 "I could kill my manager for this rota" was still refused as violence. The highest
# floor that clears the dev set.
EVERYDAY_FLOOR = 0.45

# Sentence scoring: at most this many sentences, each of at least this many words.
_MAX_SEGMENTS = 8
_MIN_SEGMENT_WORDS = 3
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")


@dataclass(frozen=True)
class Exemplars:
    categories: Mapping[str, tuple[str, ...]]
    safe: tuple[str, ...]
    # Everyday look-alikes: not fitted into the head; a sentence closer to one of them than to
    # a category's exemplars is no embedding evidence for that category (``linear_fires``).
    everyday: tuple[str, ...] = ()
    # Ordinary messages about people's own documents (``ORDINARY_PATH``): safe examples of the
    # category head; ``ordinary_doses`` those of the overdose-intent head (a smaller set: its
    # few intent exemplars would drown in all of them).
    ordinary: tuple[str, ...] = ()
    ordinary_doses: tuple[str, ...] = ()
    # Per category, messages that mean it (``SCREENS_PATH``): fitted into the category head
    # beside ``categories``, but not into the overdose-intent head, whose positives stay the
    # hand-written intent exemplars.
    screens: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def head_examples(self, key: str) -> tuple[str, ...]:
        return (*self.categories[key], *self.screens.get(key, ()))


def load_exemplars(path: Path | None = None) -> Exemplars:
    """Exemplars from a YAML (or JSON, which is YAML) file: ``categories: {key: [texts]}``,
    ``safe: [texts]`` and optionally ``everyday: [texts]``."""
    source = path or EXEMPLARS_PATH
    data: Any = yaml.safe_load(source.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("categories"), dict):
        raise ValueError(f"{source}: expected a mapping with 'categories' and 'safe'")
    categories: dict[str, tuple[str, ...]] = {}
    for key, texts in data["categories"].items():
        validate_categories([key])
        if not isinstance(texts, list) or not texts:
            raise ValueError(f"{source}: category {key!r} needs a non-empty list of texts")
        categories[key] = tuple(str(t) for t in texts)
    safe = data.get("safe") or []
    if not isinstance(safe, list):
        raise ValueError(f"{source}: 'safe' must be a list of texts")
    everyday = data.get("everyday") or []
    if not isinstance(everyday, list):
        raise ValueError(f"{source}: 'everyday' must be a list of texts")
    ordinary: dict[str, Any] = {}
    screens: dict[str, Any] = {}
    if path is None and ORDINARY_PATH.exists():
        ordinary = yaml.safe_load(ORDINARY_PATH.read_text(encoding="utf-8")) or {}
    if path is None and SCREENS_PATH.exists():
        screens = yaml.safe_load(SCREENS_PATH.read_text(encoding="utf-8")) or {}
    meant = {
        str(key): tuple(str(t) for t in texts)
        for key, texts in (screens.get("categories") or {}).items()
        if key in categories
    }
    return Exemplars(
        categories,
        tuple(str(t) for t in safe),
        tuple(str(t) for t in [*everyday, *(screens.get("everyday") or ())]),
        tuple(str(t) for t in ordinary.get("safe") or ()),
        tuple(str(t) for t in ordinary.get("doses") or ()),
        meant,
    )


@dataclass(frozen=True)
class MessageScores:
    """Raw evidence for one message, before any threshold is applied. Per scored segment
    (whole message first, then sentences): ``pairs[category]`` holds (best similarity to the
    category, best similarity to the safe exemplars) and ``probs[category]`` the linear head's
    probability. ``exemplar[category]`` indexes the category exemplar that scored highest.
    ``everyday`` holds each segment's best similarity to the everyday look-alikes (empty: none
    loaded). ``overdose`` is the overdose-intent detector's evidence (``None``: not run)."""

    rules: dict[str, list[str]] = field(default_factory=dict)
    pairs: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    probs: dict[str, list[float]] = field(default_factory=dict)
    exemplar: dict[str, int] = field(default_factory=dict)
    everyday: list[float] = field(default_factory=list)
    context: bool = False
    overdose: OverdoseEvidence | None = None

    def ordinary(self, i: int, category_similarity: float) -> bool:
        """Segment ``i`` reads as an everyday look-alike rather than as ``category``: at
        least ``EVERYDAY_FLOOR`` similar to one, and more similar to it than to any of the
        category's exemplars."""
        if i >= len(self.everyday):
            return False
        near = self.everyday[i]
        return near >= EVERYDAY_FLOOR and near > category_similarity

    def fires(self, category: str, threshold: float, margin: float) -> float | None:
        """The similarity with which ``category`` fires by similarity scoring, or ``None``."""
        best: float | None = None
        for i, (sim, safe_sim) in enumerate(self.pairs.get(category, ())):
            if self.ordinary(i, sim):
                continue
            if sim >= threshold and sim - safe_sim >= margin and (best is None or sim > best):
                best = sim
        return best

    def probability(self, category: str) -> float:
        return max(self.probs.get(category, ()), default=0.0)

    def linear_fires(self, category: str, threshold: float, floor: float) -> float | None:
        """The probability with which ``category`` fires by linear scoring, or ``None``: the
        best over segments that reach ``threshold`` and are at least ``floor`` similar to one
        of the category's exemplars."""
        # Evidence scored without a linear head has no probabilities: nothing fires.
        probs, pairs = self.probs.get(category, ()), self.pairs.get(category, ())
        hits = [
            p
            for i, (p, (sim, _)) in enumerate(zip(probs, pairs, strict=False))
            if p >= threshold and sim >= floor and not self.ordinary(i, sim)
        ]
        return max(hits, default=None)

    def best(self, category: str) -> float:
        return max((sim for sim, _ in self.pairs.get(category, ())), default=0.0)


def _segments(text: str) -> list[str]:
    whole = text.strip()
    parts = [p.strip() for p in _SENTENCE.split(whole) if p.strip()]
    parts = [p for p in parts if len(p.split()) >= _MIN_SEGMENT_WORDS]
    if len(parts) <= 1:
        return [whole]
    return [whole, *parts[:_MAX_SEGMENTS]]


# Exemplar embeddings per embedder: building a second classifier (another scoring, another
# policy) on the same embedder does not embed the exemplars again.
_EMBEDDED: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], FloatArray]] = (
    weakref.WeakKeyDictionary()
)
_EMBEDDED_LOCK = threading.Lock()


def _embed_exemplars(embedder: Embedder, texts: tuple[str, ...]) -> FloatArray:
    with _EMBEDDED_LOCK:
        try:
            cached = _EMBEDDED.setdefault(embedder, {})
        except TypeError:  # an embedder that cannot be weakly referenced: no cache
            cached = {}
        if texts not in cached:
            cached[texts] = np.asarray(embedder.embed_documents(list(texts)), dtype=np.float32)
        return cached[texts]


def _softmax(z: FloatArray) -> FloatArray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


def _fit_softmax(
    x: FloatArray,
    y: npt.NDArray[np.int64],
    n_classes: int,
    *,
    l2: float = 1e-3,
    weights: npt.NDArray[np.float64] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Multinomial logistic regression (L2-regularised cross-entropy) fitted with L-BFGS:
    deterministic, ~40 iterations and well under a second for a few hundred exemplars."""
    from scipy.optimize import minimize

    data = x.astype(np.float64)
    dim = data.shape[1]
    onehot = np.eye(n_classes)[y]
    w_row = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    w_row = w_row / w_row.mean()

    def loss(theta: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
        w = theta[: dim * n_classes].reshape(dim, n_classes)
        z = data @ w + theta[dim * n_classes :]
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        nll = -np.log(p[np.arange(len(y)), y] + 1e-12)
        value = float((w_row * nll).mean()) + 0.5 * l2 * float((w * w).sum())
        grad = (p - onehot) * w_row[:, None] / len(y)
        return value, np.concatenate([(data.T @ grad + l2 * w).ravel(), grad.sum(axis=0)])

    start = np.zeros(dim * n_classes + n_classes)
    result = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    w = result.x[: dim * n_classes].reshape(dim, n_classes).astype(np.float32)
    return w, result.x[dim * n_classes :].astype(np.float32)


# A message more similar (cosine, masked) to an ordinary medicine question from people's own
# documents (``Exemplars.ordinary_doses``: the corpus's train split) than to any intent
# exemplar by this margin is read as ordinary: on the corpus's val split it cleared 4 of 5
# false alarms with crisis detection on tests/safety/overdose.dev.yaml and .test.yaml
# unchanged (docs/benchmarks.md). Fitting those questions into the head instead cost dev recall.
ORDINARY_MARGIN = 0.05


@dataclass(frozen=True)
class OverdoseEvidence:
    """Intent probabilities for one message: whole, best clause, best "earlier turn +
    message", best earlier turn alone. ``medication`` is the term found (``None``: no
    medication context, nothing was scored)."""

    medication: str | None = None
    message: float = 0.0
    clause: float = 0.0
    with_context: float = 0.0
    context: float = 0.0
    # How much nearer the message is to an ordinary medicine question than to any intent
    # exemplar (cosine difference; -1 when there are no ordinary questions to compare with).
    ordinary: float = -1.0

    def decide(
        self, threshold: float, context_threshold: float, floor: float
    ) -> tuple[float, str] | None:
        """``(probability, which reading fired)`` or ``None``."""
        if self.medication is None:
            return None
        alone_ordinary = self.ordinary > ORDINARY_MARGIN
        if self.message >= threshold and not alone_ordinary:
            return self.message, "message"
        if self.with_context >= threshold:
            return self.with_context, "message with an earlier turn"
        if self.message < floor:
            return None
        if self.clause >= threshold and not alone_ordinary:
            return self.clause, "clause"
        if self.context >= context_threshold:
            return self.context, "earlier turn"
        return None
