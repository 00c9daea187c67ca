"""What training chooses on val: the refusal threshold keeps wrong refusals within the bound,
and the quoting settings are read from probabilities, best first."""

from __future__ import annotations

import numpy as np

from ragchat.eval.reader.dataset import Example
from ragchat.eval.reader.train import MAX_WRONG_REFUSALS, choose, selected, simulate
from ragchat.reader.model import Choices


def _example(qid: str, answerable: bool, texts: list[str], good: int = -1) -> Example:
    e = Example(qid, {"group": "g"}, answerable, True, "q", "q", "")
    e.texts = texts
    e.match = np.array([1.0 if i == good else 0.0 for i in range(len(texts))], np.float32)
    return e


def test_selected_keeps_the_lead_and_near_ones_within_the_cap() -> None:
    probs = np.array([0.1, 0.9, 0.5, 0.2, 0.6])
    assert selected(probs, Choices(0.5, relative=0.5, floor=0.1, max_sentences=3)) == [1, 4, 2]
    assert selected(probs, Choices(0.5, relative=0.9, floor=0.1, max_sentences=3)) == [1]
    assert selected(np.zeros(0), Choices()) == []


def test_the_threshold_refuses_at_most_the_allowed_share_of_answerable_questions() -> None:
    rng = np.random.default_rng(0)
    examples, probs, p_answer, facts = [], {}, {}, {}
    for i in range(200):
        answerable = i < 150
        e = _example(f"q{i}", answerable, ["the fee is 40 pounds", "opening hours"], good=0)
        examples.append(e)
        probs[e.qid] = np.array([0.8, 0.1])
        p_answer[e.qid] = float(rng.uniform(0.3, 1.0) if answerable else rng.uniform(0, 0.6))
        if answerable:
            facts[e.qid] = [["40 pounds"]]
    c = choose(examples, probs, p_answer, facts)
    sim = simulate(examples, probs, p_answer, facts, c)
    assert sim["wrong_refusals"] <= MAX_WRONG_REFUSALS + 1 / 150
    assert sim["unanswerable_refused"] > 0.3
    assert sim["key_facts"] == 1 - sim["wrong_refusals"]
