"""What quoting the sentences around a prose lead does to the reader's replies, simulated over
the retrieved passages of the corpus's answerable questions (the figures behind
``PROSE_AROUND`` in ``reader/compose.py``): key facts, words and sentences per reply for train
(out of fold: each group scored by a scorer fitted without it) and val (the shipped scorer).

A neighbour is the candidate next to the lead in the same passage and under the same heading;
table rows and transcript lines get none (rows are other records, transcript lines are quoted
as an exchange). "gated" skips a lead that answers by itself (``compose.answers_alone``). Needs the
examples cache of ``ragchat reader train --cache DIR`` (test is never read)::

    PYTHONPATH=src .venv/bin/python benchmarks/reader_around.py --cache /tmp/reader-cache
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

import numpy as np

from ragchat.eval.documents import facts_found
from ragchat.eval.reader import train as trainer
from ragchat.eval.reader.dataset import Example
from ragchat.reader.compose import answers_alone
from ragchat.reader.features import INDEX
from ragchat.reader.model import shipped
from ragchat.reader.question import analyse

SETTINGS = {
    "nothing (the lead and the model's choices)": (0, False),
    "the next sentence, always": (1, False),
    "before and after, always": (-1, False),
    "the next sentence, gated": (1, True),
    "before and after, gated": (-1, True),
    "two before and two after, gated": (-2, True),
}


def load(cache: Path, split: str) -> list[Example]:
    out: list[Example] = []
    for path in sorted(cache.glob(f"{split}-*.pkl")):
        with path.open("rb") as fh:
            out += [e for e in pickle.load(fh) if e.judged and len(e.texts)]
    return out


def beside(e: Example, lead: int, spread: int) -> list[int]:
    """``spread`` 1: the next candidate; -k: k on each side."""
    if e.x[lead, INDEX["is_row"]] > 0 or e.hit_docs[lead].endswith(".vtt"):
        return []
    steps = [1] if spread == 1 else [d for k in range(1, -spread + 1) for d in (k, -k)]
    return [
        j
        for j in (lead + d for d in steps)
        if 0 <= j < len(e.texts)
        and e.hit_docs[j] == e.hit_docs[lead]
        and e.labels[j] == e.labels[lead]
        and e.x[j, INDEX["is_row"]] == 0
    ]


def measure(
    examples: list[Example],
    probs: dict[str, np.ndarray],
    facts: dict[str, list[list[str]]],
    spread: int,
    gated: bool,
) -> tuple[float, float, float]:
    choices = shipped().card.choices
    ans = [e for e in examples if e.answerable and e.qid in facts]
    got = words = sentences = 0
    for e in ans:
        p = probs[e.qid]
        keep = trainer.selected(p, choices)
        lead = keep[0]
        want = analyse(e.query, e.message, e.previous).wanted
        if spread and not (gated and answers_alone(want, e.texts[lead], float(p[lead]))):
            keep = sorted(set(keep) | set(beside(e, lead, spread)))
        got += facts_found(" ".join(e.texts[i] for i in keep), facts[e.qid]) == len(facts[e.qid])
        words += sum(len(e.texts[i].split()) for i in keep)
        sentences += len(keep)
    n = max(1, len(ans))
    return got / n, words / n, sentences / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    args = parser.parse_args()
    facts = trainer.facts_of(args.corpus)
    train, val = load(args.cache, "train"), load(args.cache, "val")
    probs: dict[str, np.ndarray] = {}
    for group in sorted({e.tags["group"] for e in train}):
        scorer = trainer.fit_scorer([e for e in train if e.tags["group"] != group], trainer.SEED)
        probs |= {e.qid: scorer.predict(e.x) for e in train if e.tags["group"] == group}
    model = shipped()
    probs |= {e.qid: model.candidates(e.x) for e in val}
    print("| quoted around the lead | train key facts / words / sentences | val |")
    print("|---|---:|---:|")
    for name, (spread, gated) in SETTINGS.items():
        row = []
        for examples in (train, val):
            kf, w, s = measure(examples, probs, facts, spread, gated)
            row.append(f"{100 * kf:.1f}% / {w:.0f} / {s:.2f}")
        print(f"| {name} | {row[0]} | {row[1]} |", flush=True)


if __name__ == "__main__":
    main()
