"""The question-level decision: does what was retrieved answer the question? One calibrated
probability from the scorer's candidate probabilities and the question-level signals; the
reader refuses below a threshold chosen on the validation split."""

from __future__ import annotations

import numpy as np

from ragchat.reader.features import INDEX
from ragchat.reader.head import HEAD_SIGNALS
from ragchat.reader.signals import LEAD_SIGNALS, PASSAGE_SIGNALS

REFUSAL_FEATURES: tuple[str, ...] = (
    "p1", "p2", "p_gap", "p_above_half", "p_mean3", "lead_cos", "lead_lex", "lead_spec_cov",
    "q_terms", "q_kind", "q_yes_no", "q_follow_up", *PASSAGE_SIGNALS, *LEAD_SIGNALS,
    *HEAD_SIGNALS,
)  # fmt: skip


def refusal_features(
    probs: np.ndarray, x: np.ndarray, passage: np.ndarray, lead: np.ndarray, agree: np.ndarray
) -> np.ndarray:
    """The question's row: ``probs`` the candidates' probabilities, ``x`` their features,
    ``passage`` the passage signals, ``lead`` the lead signals of the best candidate, ``agree``
    the learned interaction's signals (``head.py``)."""
    if len(probs) == 0:
        head = np.zeros(12, dtype=np.float32)
        lead = np.zeros(len(LEAD_SIGNALS), np.float32)
        return np.concatenate([head, passage, lead, agree])
    order = np.argsort(-probs, kind="stable")
    best = int(order[0])
    p1 = float(probs[best])
    p2 = float(probs[order[1]]) if len(order) > 1 else 0.0
    row = x[best]
    head = np.array(
        [
            p1,
            p2,
            p1 - p2,
            float((probs >= 0.5).sum()),
            float(probs[order[:3]].mean()),
            row[INDEX["ctx_cos"]],
            row[INDEX["lex_ctx"]],
            row[INDEX["spec_cov_ctx"]],
            row[INDEX["q_terms"]],
            row[INDEX["q_kind"]],
            row[INDEX["q_yes_no"]],
            row[INDEX["q_follow_up"]],
        ],
        dtype=np.float32,
    )
    return np.concatenate([head, passage, lead, agree])
