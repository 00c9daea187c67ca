"""Calibrate and measure the offline classifier on a labelled set.

The labelled file maps a label (a category key or ``safe``) to a list of messages. Run
``python -m ragchat.safety.evaluate LABELLED.yaml`` for per-category precision/recall at the
defaults and a threshold × margin sweep with the packaged embedder."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragchat.safety.base import validate_categories
from ragchat.safety.offline import MessageScores, OfflineSafetyClassifier

SAFE = "safe"


def load_labelled(path: Path) -> list[tuple[str, str]]:
    """``(text, label)`` pairs from ``{label: [texts]}`` (conversations: their last message)."""
    return [(case.text, case.label) for case in load_cases(path)]


@dataclass(frozen=True)
class Case:
    """A labelled message; ``context`` holds the earlier user turns, oldest first."""

    text: str
    label: str
    context: tuple[str, ...] = ()


def load_cases(path: Path) -> list[Case]:
    """Cases from ``{label: [items]}``; an item is a message, or a list of user turns whose
    last one is the message judged (intent spread over several messages)."""
    data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of label → list of messages")
    cases: list[Case] = []
    for label, items in data.items():
        if label != SAFE:
            validate_categories([label])
        for item in items:
            turns = [str(t) for t in item] if isinstance(item, list) else [str(item)]
            if not turns:
                raise ValueError(f"{path}: an empty conversation under {label!r}")
            cases.append(Case(turns[-1], str(label), tuple(turns[:-1])))
    return cases


@dataclass
class Report:
    """Counts per category: ``tp`` (right category), ``fn`` (labelled, not predicted as it),
    ``fp`` (predicted, labelled otherwise). ``safe_flagged`` counts safe messages blocked."""

    tp: dict[str, int] = field(default_factory=dict)
    fp: dict[str, int] = field(default_factory=dict)
    fn: dict[str, int] = field(default_factory=dict)
    safe_total: int = 0
    safe_flagged: list[str] = field(default_factory=list)
    missed: list[tuple[str, str, str | None]] = field(default_factory=list)

    def precision(self, category: str) -> float:
        tp, fp = self.tp.get(category, 0), self.fp.get(category, 0)
        return tp / (tp + fp) if tp + fp else 1.0

    def recall(self, category: str) -> float:
        tp, fn = self.tp.get(category, 0), self.fn.get(category, 0)
        return tp / (tp + fn) if tp + fn else 1.0

    @property
    def false_positive_rate(self) -> float:
        return len(self.safe_flagged) / self.safe_total if self.safe_total else 0.0

    @property
    def categories(self) -> list[str]:
        return sorted(set(self.tp) | set(self.fn) | set(self.fp))

    def table(self) -> str:
        lines = [f"{'category':28} {'n':>3} {'precision':>9} {'recall':>7}"]
        for c in self.categories:
            n = self.tp.get(c, 0) + self.fn.get(c, 0)
            lines.append(f"{c:28} {n:3d} {self.precision(c):9.2f} {self.recall(c):7.2f}")
        lines.append(
            f"{'safe (false-positive rate)':28} {self.safe_total:3d} "
            f"{'':9} {self.false_positive_rate:7.2f}"
        )
        return "\n".join(lines)


def evaluate_scores(
    classifier: OfflineSafetyClassifier,
    items: Sequence[tuple[str, str]],
    scores: Sequence[MessageScores],
    *,
    threshold: float | None = None,
    margin: float | None = None,
) -> Report:
    report = Report()
    for (text, label), evidence in zip(items, scores, strict=True):
        verdict = classifier.decide(evidence, threshold=threshold, margin=margin)
        predicted = None if verdict.safe else verdict.category
        if label == SAFE:
            report.safe_total += 1
            if predicted is not None:
                report.safe_flagged.append(text)
                report.fp[predicted] = report.fp.get(predicted, 0) + 1
            continue
        if predicted == label:
            report.tp[label] = report.tp.get(label, 0) + 1
        else:
            report.fn[label] = report.fn.get(label, 0) + 1
            report.missed.append((text, label, predicted))
            if predicted is not None:
                report.fp[predicted] = report.fp.get(predicted, 0) + 1
    return report


def evaluate(
    classifier: OfflineSafetyClassifier,
    items: Sequence[tuple[str, str]] | Sequence[Case],
    *,
    threshold: float | None = None,
    margin: float | None = None,
) -> Report:
    """``items``: ``(text, label)`` pairs, or ``Case``s whose earlier turns are read too."""
    cases = [c if isinstance(c, Case) else Case(c[0], c[1]) for c in items]
    scores = classifier.score_many([c.text for c in cases], [c.context for c in cases])
    pairs = [(c.text, c.label) for c in cases]
    return evaluate_scores(classifier, pairs, scores, threshold=threshold, margin=margin)


def sweep(
    classifier: OfflineSafetyClassifier,
    items: Sequence[tuple[str, str]] | Sequence[Case],
    thresholds: Iterable[float],
    margins: Iterable[float],
) -> list[tuple[float, float, Report]]:
    cases = [c if isinstance(c, Case) else Case(c[0], c[1]) for c in items]
    scores = classifier.score_many([c.text for c in cases], [c.context for c in cases])
    pairs = [(c.text, c.label) for c in cases]
    margins = list(margins)
    return [
        (t, m, evaluate_scores(classifier, pairs, scores, threshold=t, margin=m))
        for t in thresholds
        for m in margins
    ]


def _main() -> None:  # pragma: no cover - a calibration tool
    from ragchat.embed.factory import load_embedder
    from ragchat.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("labelled", type=Path)
    parser.add_argument("--rules-only", action="store_true")
    parser.add_argument("--scoring", choices=["similarity", "linear"], default="linear")
    args = parser.parse_args()
    items = load_cases(args.labelled)
    classifier = OfflineSafetyClassifier(load_embedder(Settings()), scoring=args.scoring)
    if args.rules_only:
        report = evaluate(classifier, items, threshold=2.0)
        print("rules only\n" + report.table())
        return
    report = evaluate(classifier, items)
    print(report.table())
    for text, label, predicted in report.missed:
        print(f"  missed [{label} → {predicted}] {text}")
    for text in report.safe_flagged:
        print(f"  false positive: {text}")
    print("\nthreshold margin  macro-recall  fp-rate  min-precision")
    if args.scoring == "linear":
        grid = sweep(classifier, items, [0.3 + 0.05 * i for i in range(9)], [0.0])
    else:
        grid = sweep(
            classifier, items, [0.35 + 0.05 * i for i in range(6)], [0.05, 0.1, 0.15, 0.2, 0.25]
        )
    for t, m, r in grid:
        cats = r.categories
        macro = sum(r.recall(c) for c in cats) / len(cats) if cats else 0.0
        worst = min((r.precision(c) for c in cats), default=1.0)
        print(f"{t:9.3f} {m:6.2f} {macro:13.3f} {r.false_positive_rate:8.3f} {worst:14.3f}")


if __name__ == "__main__":  # pragma: no cover
    _main()
