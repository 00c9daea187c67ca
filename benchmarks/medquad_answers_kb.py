"""Writes the flat MedQuAD knowledge base used to score answers on ``answers.dev.jsonl``.

Embedding all 15,803 flat records takes hours on two shared cores, so the knowledge base is a
deterministic subset: every record whose title is the topic of one of the dev questions (the
gold answer and its siblings — Symptoms, Treatment, Causes of the same topic, the distractors
that matter for section-aware answers) plus a seeded sample of other records. Nothing goes into
the repository. Output (default ``/tmp/medquad-answers``)::

    corpus.jsonl      the records (ingest with ``ragchat ingest``)

Usage::

    .venv/bin/python benchmarks/medquad_answers_kb.py [--out DIR] [--others 1600] [--seed 9]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from _common import DATA, read_jsonl


def build(out: Path, others: int, seed: int) -> dict[str, int]:
    answers = read_jsonl(DATA / "medquad" / "answers.dev.jsonl")
    corpus = read_jsonl(DATA / "medquad" / "corpus.jsonl")
    topics = {str(a["topic"]) for a in answers}
    golds = {str(a["gold_doc"]) for a in answers}
    chosen = [r for r in corpus if r.get("title") in topics or r["_id"] in golds]
    rest = [r for r in corpus if not (r.get("title") in topics or r["_id"] in golds)]
    chosen += random.Random(seed).sample(rest, min(others, len(rest)))
    chosen.sort(key=lambda r: str(r["_id"]))
    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for rec in chosen:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    found = golds & {str(r["_id"]) for r in chosen}
    return {"records": len(chosen), "golds": len(golds), "golds_in_kb": len(found)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/medquad-answers"))
    parser.add_argument("--others", type=int, default=1600)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    print(build(args.out, args.others, args.seed))


if __name__ == "__main__":
    main()
