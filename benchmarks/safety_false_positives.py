"""False positives of the default offline safety classifier on messages that must be allowed.

Every message read is treated as safe, so every block is a false positive. It exists because
precision on a hand-written calibration set says little about real traffic: run it on an
outside source of alarming-but-benign questions (PubMedQA) and on the support agent's everyday
messages. Accepted inputs, by file name:

* ``*.json``: PubMedQA (``{id: {"QUESTION": ...}}``);
* ``*.jsonl``: one record per line with ``text`` (BEIR queries) or ``question``;
* ``*.yaml``/``*.yml``: a list of messages, or a labelled file (only its ``safe`` list is read);
* anything else: plain text, one message per line.

Example::

    PYTHONPATH=src .venv/bin/python benchmarks/safety_false_positives.py \\
        ../shared/data/pubmedqa/pqal.dev.json tests/safety/distress.yaml
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml


def load_messages(path: Path) -> list[str]:
    """The messages in ``path`` (see the module docstring for the formats)."""
    raw = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    if suffix == ".json":
        data: Any = json.loads(raw)
        records = data.values() if isinstance(data, dict) else data
        return [str(r.get("QUESTION") or r.get("question") or r["text"]) for r in records]
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
        return [str(r.get("text") or r.get("question") or r["QUESTION"]) for r in rows]
    if suffix in (".yaml", ".yml"):
        data = yaml.safe_load(raw)
        items = data.get("safe", []) if isinstance(data, dict) else data
        return [str(t) for t in items]
    return [line.strip() for line in raw.splitlines() if line.strip()]


def main() -> None:
    from ragchat.embed.factory import load_embedder
    from ragchat.safety.offline import OfflineSafetyClassifier
    from ragchat.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", type=Path, nargs="+")
    parser.add_argument("--limit", type=int, default=None, help="first N messages per file")
    parser.add_argument(
        "--scoring", choices=["linear", "similarity"], default="linear", help="as in evaluate"
    )
    args = parser.parse_args()
    classifier = OfflineSafetyClassifier(load_embedder(Settings()), scoring=args.scoring)
    for path in args.paths:
        messages = load_messages(path)[: args.limit]
        scores = classifier.score_many(messages)
        verdicts = [classifier.decide(s) for s in scores]
        flagged = [(t, v) for t, v in zip(messages, verdicts, strict=True) if not v.safe]
        print(f"{path}: {len(flagged)} of {len(messages)} flagged as unsafe")
        for text, verdict in flagged:
            print(f"  [{verdict.category}] {text}\n      {verdict.reason}")


if __name__ == "__main__":
    main()
