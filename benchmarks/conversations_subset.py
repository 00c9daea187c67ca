"""Writes the flat MedQuAD knowledge base behind ``ragchat eval conversations`` on the dev
conversations (nothing goes into the repo).

Embedding all 15,803 MedQuAD answers takes hours on two busy cores, so the knowledge base is a
deterministic part of ``corpus.jsonl``: every answer of the pages the conversations are about,
every gold document (some are shared answers of other pages), and every ``--stride``-th of the
remaining answers as distractors (default 8: about 3,800 documents). Figures on it are not
comparable with a full-corpus run; before/after comparisons on it are.

Output (default ``/tmp/medquad-conversations``): ``corpus.jsonl`` (ingest with ``ragchat ingest``).

Usage: ``.venv/bin/python benchmarks/conversations_subset.py [--out DIR] [--stride N]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import DATA


def build(data: Path, out: Path, stride: int) -> dict[str, int]:
    pages: set[tuple[str, str]] = set()
    gold: set[str] = set()
    with (data / "conversations.dev.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            conv = json.loads(line)
            source, name = str(conv["page"]).split("/", 1)
            pages.add((source.split("_", 1)[0], name.removesuffix(".md")))
            gold.update(str(t["gold_doc"]) for t in conv["turns"] if t.get("gold_doc"))
    kept = {"topic": 0, "distractor": 0}
    out.mkdir(parents=True, exist_ok=True)
    rest = 0
    with (
        (data / "corpus.jsonl").open(encoding="utf-8") as fh,
        (out / "corpus.jsonl").open("w", encoding="utf-8") as dst,
    ):
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            cid = str(rec["_id"])
            source, rest_id = cid.split(":", 1)
            if (source, rest_id.rsplit("-", 1)[0]) in pages or cid in gold:
                kept["topic"] += 1
            else:
                rest += 1
                if rest % stride:
                    continue
                kept["distractor"] += 1
            dst.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "medquad")
    parser.add_argument("--out", type=Path, default=Path("/tmp/medquad-conversations"))
    parser.add_argument("--stride", type=int, default=8)
    args = parser.parse_args()
    kept = build(args.data, args.out, max(args.stride, 1))
    print(f"{args.out / 'corpus.jsonl'}: {kept['topic']} topic + {kept['distractor']} distractors")


if __name__ == "__main__":
    main()
