"""Question-level signals for the refusal decision: how much of the question the retrieved
passages hold at all (key terms missing from every passage, and whether a passage word is near
each in meaning), and how well one chosen lead answers it (key terms it covers, a measured
value asked for and present, a table row with a column for what was asked). The checks of the
old refusal rules, as numbers for a calibrated model rather than hard refusals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.reader import coverage
from ragchat.reader.question import Question
from ragchat.retrieve.terms import content_stems
from ragchat.types import Hit

PASSAGE_SIGNALS: tuple[str, ...] = (
    "key_terms", "missing_share", "far_share", "named_far_share", "specific_far",
    "renumbered", "gate",
)  # fmt: skip
LEAD_SIGNALS: tuple[str, ...] = (
    "lead_key_share", "measure_unmet", "other_column", "uncounted",
)  # fmt: skip


def passage_signals(
    question: Question, hits: Sequence[Hit], embedder: Embedder | None
) -> np.ndarray:
    """``PASSAGE_SIGNALS`` of the question over ``hits``."""
    text = question.text
    missing, n_key = coverage.missing_terms(text, hits)
    counted = coverage._counted(text, missing)
    plain = [w for w in counted if not coverage.named(w)]
    texts = [coverage.hit_text(h) for h in hits[: coverage.VOCAB_HITS]]
    close = coverage.near(plain, texts, embedder) if plain and embedder is not None else set()
    far = [w for w in counted if w not in close]
    specific = [
        w for w in far
        if not coverage.named(w) and coverage._zipf(w) < coverage.SPECIFIC_ZIPF
        and not coverage._VERB_FORM.search(w)
    ]  # fmt: skip
    denom = max(1, n_key)
    gate = max((float(h.scores.get("dense", 0.0)) for h in hits), default=0.0)
    return np.array(
        [
            n_key,
            len(missing) / denom,
            len(far) / denom,
            sum(coverage.named(w) for w in far) / denom,
            len(specific),
            coverage._renumbered(text, hits),
            gate,
        ],
        dtype=np.float32,
    )


def lead_signals(
    question: Question, lead: str, label: str, embedder: Embedder | None
) -> np.ndarray:
    """``LEAD_SIGNALS`` of one candidate as the reply's lead."""
    text = question.text
    key, said = coverage.key_terms(text)
    key -= coverage._generic_stems(text)
    said = set(said) | content_stems(lead) | content_stems(label)
    share = len(key & said) / len(key) if key else 1.0
    measure = any(ask.search(text) and not value.search(lead) for ask, value in coverage._MEASURES)
    return np.array(
        [
            share,
            measure,
            coverage._other_column(text, lead, label, embedder),
            coverage._uncounted(text, [lead], embedder),
        ],
        dtype=np.float32,
    )
