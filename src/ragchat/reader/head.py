"""A learned interaction between the question's vector and each candidate's: a linear model
over their element-wise product and absolute difference (the MiniLM vectors ``prepare``
already computes, so it costs no embedding). Plain cosine weighs every dimension alike; this
learns which agreements mean "answers this" on the corpus's (question, evidence) pairs. Its
scores feed the refusal model as three signals; the candidate scorer does not read them.

The weights belong to the embedding model they were trained with: under another one (a user's
own model, a test's fake) the signals are missing (NaN), which the refusal model reads as
unknown rather than as a verdict."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragchat.embed.base import Embedder

HEAD_SIGNALS: tuple[str, ...] = ("head_max", "head_lead", "head_gap")
NONE = np.array([-10.0, -10.0, 0.0], dtype=np.float32)  # no candidates: nothing agrees
UNKNOWN = np.full(len(HEAD_SIGNALS), np.nan, dtype=np.float32)  # another embedding model


def pair_inputs(query_vector: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    q = np.asarray(query_vector, dtype=np.float32)[None, :]
    s = np.asarray(vectors, dtype=np.float32)
    return np.hstack([q * s, np.abs(q - s)])


@dataclass(frozen=True)
class Head:
    weights: np.ndarray  # (2 × dimension,)
    bias: float
    model: str  # the embedder's ``model_name`` the weights were trained with

    def applies(self, embedder: Embedder | None) -> bool:
        return (
            embedder is not None
            and embedder.model_name == self.model
            and 2 * embedder.dim == len(self.weights)
        )

    def scores(self, query_vector: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """A logit per candidate: higher is more like a sentence that answers the question."""
        if len(vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        out = pair_inputs(query_vector, vectors) @ self.weights + self.bias
        return np.asarray(out, dtype=np.float32)

    def save(self, path: Path) -> None:
        weights = [round(float(w), 6) for w in self.weights]
        data = {"model": self.model, "bias": float(self.bias), "weights": weights}
        path.write_text(json.dumps(data) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Head:
        data = json.loads(path.read_text(encoding="utf-8"))
        weights = np.asarray(data["weights"], dtype=np.float32)
        return cls(weights, float(data["bias"]), str(data["model"]))


def head_signals(scores: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``HEAD_SIGNALS``: the best head score, the score of the scorer's lead candidate, and
    the best's margin over the runner-up."""
    if len(scores) == 0:
        return NONE.copy()
    top = np.sort(scores)[::-1]
    gap = float(top[0] - top[1]) if len(top) > 1 else 10.0
    lead = float(scores[int(np.argmax(probs))]) if len(probs) == len(scores) else float(top[0])
    return np.array([float(top[0]), lead, gap], dtype=np.float32)
