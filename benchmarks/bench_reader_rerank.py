"""What reranking with the trained reader costs (issue 34): milliseconds per query and per
passage to rerank the first ``reranker.candidates`` hits of the default hybrid retrieval.

For a seeded sample of a knowledge base's queries, the hits are retrieved once without
reranking (not timed), then ``ReaderReranker.rerank`` is timed twice over the same hits:
"first" is the first time the process reads those passages (their sentence vectors are computed,
except for passages an earlier query already brought), "again" is with every sentence vector
cached (what a passage costs once a server has read it: features and the scorer only). Prints a
Markdown table.

Usage::

    .venv/bin/python benchmarks/bench_reader_rerank.py --kb scifact --data-dir /tmp/sf \\
        --queries ../shared/data/scifact/queries.train.jsonl --n 50
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from _common import pct, read_jsonl

from ragchat import resources
from ragchat.agents.rerankers import configured_reranker, kb_retriever
from ragchat.settings import READER_RERANKER, Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--seed", type=int, default=34)
    args = ap.parse_args()

    settings = Settings(data_dir=args.data_dir, reranker={"model": READER_RERANKER})
    kb = resources.open_kb(settings, args.kb)
    retriever = kb_retriever(settings, kb, settings.retrieval.model_copy(update={"rerank": False}))
    reranker, _ = configured_reranker(settings, kb.embedder)
    assert reranker is not None
    window = settings.reranker.candidates
    queries = [str(q["text"]) for q in read_jsonl(args.queries)]
    sample = random.Random(args.seed).sample(queries, min(args.n, len(queries)))

    passages = 0
    timings: dict[str, list[float]] = {"first": [], "again": []}
    for query in sample:
        hits = retriever.retrieve(query, top_k=window).hits[:window]
        passages += len(hits)
        for run in ("first", "again"):
            start = time.perf_counter()
            reranker.rerank(query, hits)
            timings[run].append((time.perf_counter() - start) * 1000.0)

    print(f"{len(sample)} queries (seed {args.seed}), {passages / len(sample):.1f} passages each")
    print()
    print("| pass | ms/query p50 | ms/query p95 | ms/passage (mean) |")
    print("|---|---:|---:|---:|")
    for run, ms in timings.items():
        per_passage = sum(ms) / max(passages, 1)
        print(f"| {run} | {pct(ms, 50):.0f} | {pct(ms, 95):.0f} | {per_passage:.1f} |")


if __name__ == "__main__":
    main()
