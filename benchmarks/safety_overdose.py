"""Self-harm detection on the medical path: the offline classifier with and without the
overdose-intent detector, side by side, on labelled sets and on sets that must be allowed.

Labelled sets (``--labelled``, e.g. tests/safety/overdose.dev.yaml): detection is the share of
``self_harm`` items refused as self-harm, false alarms the share of ``safe`` items refused for
any reason. An item may be a conversation (earlier user turns, then the message).
Must-allow sets (``--allowed``, any format ``safety_false_positives.load_messages`` reads):
every refusal is a false positive.

Example (the figures in docs/benchmarks.md)::

    PYTHONPATH=src .venv/bin/python benchmarks/safety_overdose.py \\
        --labelled tests/safety/overdose.dev.yaml tests/safety/overdose.test.yaml \\
        --allowed tests/safety/distress.yaml ../shared/data/pubmedqa/pqal.dev.json \\
                  ../shared/data/medquad/queries.dev.jsonl

``--show PATH`` lists the misses and false alarms of one labelled set (use it on the dev set
only: the test split is measured, never tuned on)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from safety_false_positives import load_messages


def main() -> None:
    from ragchat.embed.factory import load_embedder
    from ragchat.safety.evaluate import Case, load_cases
    from ragchat.safety.offline import OfflineSafetyClassifier
    from ragchat.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labelled", type=Path, nargs="*", default=[])
    parser.add_argument("--allowed", type=Path, nargs="*", default=[])
    parser.add_argument("--show", type=Path, action="append", default=[])
    args = parser.parse_args()

    embedder = load_embedder(Settings())
    started = time.perf_counter()
    classifiers = {
        "before": OfflineSafetyClassifier(embedder, overdose=False),
        "after": OfflineSafetyClassifier(embedder),
    }
    print(f"built both classifiers in {time.perf_counter() - started:.1f} s")

    def verdicts(name: str, cases: list[Case]) -> list[tuple[bool, str | None, str]]:
        clf = classifiers[name]
        scores = clf.score_many([c.text for c in cases], [c.context for c in cases])
        out = []
        for case, evidence in zip(cases, scores, strict=True):
            verdict = clf.decide(evidence)
            if not verdict.safe or not case.context:
                out.append((verdict.safe, verdict.category, verdict.reason))
                continue
            # The follow-up rule of classify_sync (rule-level self-harm in earlier turns).
            full = clf.classify_sync(case.text, [("user", t) for t in case.context])
            out.append((full.safe, full.category, full.reason))
        return out

    print(f"\n{'set':44} {'n':>5} {'before':>14} {'after':>14}")
    for path in args.labelled:
        cases = load_cases(path)
        crisis = [c for c in cases if c.label == "self_harm"]
        benign = [c for c in cases if c.label == "safe"]
        row_d, row_f = [], []
        for name in classifiers:
            caught = verdicts(name, crisis)
            alarms = verdicts(name, benign)
            hits = sum(1 for safe, cat, _ in caught if not safe and cat == "self_harm")
            false = sum(1 for safe, _, _ in alarms if not safe)
            row_d.append(f"{hits}/{len(crisis)} {hits / len(crisis):4.0%}")
            row_f.append(f"{false}/{len(benign)} {false / len(benign):4.0%}")
            if name == "after" and path in args.show:
                for case, (safe, cat, reason) in zip(crisis, caught, strict=True):
                    if safe or cat != "self_harm":
                        print(f"  missed: {[*case.context, case.text]} ({reason})")
                for case, (safe, _, reason) in zip(benign, alarms, strict=True):
                    if not safe:
                        print(f"  false alarm: {[*case.context, case.text]} ({reason})")
        for what, n, row in (
            ("self-harm detected", len(crisis), row_d),
            ("benign refused", len(benign), row_f),
        ):
            print(f"{path.name + ': ' + what:44} {n:5d} {row[0]:>14} {row[1]:>14}")
    for path in args.allowed:
        cases = [Case(m, "safe") for m in load_messages(path)]
        row = []
        timing = []
        for name in classifiers:
            started = time.perf_counter()
            results = verdicts(name, cases)
            timing.append(1000 * (time.perf_counter() - started) / max(1, len(cases)))
            pairs = zip(cases, results, strict=True)
            bad = [(c.text, cat) for c, (safe, cat, _) in pairs if not safe]
            row.append(f"{len(bad)}/{len(cases)}")
            if name == "after":
                for text, cat in bad:
                    print(f"  refused [{cat}]: {text}")
        print(
            f"{path.name + ': refused':44} {len(cases):5d} {row[0]:>14} {row[1]:>14}"
            f"   ({timing[0]:.1f} / {timing[1]:.1f} ms per message)"
        )
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
