"""The trained reader as reranker (issue 34): nDCG@10 and recall@10 of the default hybrid
ranking before and after the reader reranks its first ``--window`` hits (30, what a chat turn
reranks: ``reranker.candidates``), and what that costs per query and per passage.

``ragchat eval retrieval --configs hybrid,hybrid+rerank`` asks for 100 hits (for Recall@100),
so the pipeline reranks 100 passages a query there; the reader embeds every sentence of every
passage it reads, which on two shared cores is minutes a hundred queries. Here each query is
retrieved once, without reranking (the ``hybrid`` named configuration), and the same hits are
scored as fused and as reranked, so the difference is the reranker's alone. A seeded sample
of the queries (``--n``) keeps a run short. Nothing is written into the repository.

Usage::

    .venv/bin/python benchmarks/eval_reader_rerank.py --kb scifact --data-dir /tmp/sf \\
        --queries ../shared/data/scifact/queries.train.jsonl \\
        --qrels ../shared/data/scifact/qrels.train.tsv --n 60
    .venv/bin/python benchmarks/eval_reader_rerank.py --kb medquad_md --data-dir /tmp/mq \\
        --queries /tmp/medquad-subset/queries.md.jsonl \\
        --sections /tmp/medquad-subset/sections.tsv --n 60
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
from _common import pct

from ragchat import resources
from ragchat.agents.rerankers import configured_reranker, kb_retriever
from ragchat.eval.configs import ConfigRegistry
from ragchat.eval.data import ranked_units
from ragchat.eval.gold import load_inputs
from ragchat.eval.metrics import has_relevant, ndcg, recall
from ragchat.settings import READER_RERANKER, Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--qrels", type=Path)
    ap.add_argument("--sections", type=Path)
    ap.add_argument("--n", type=int, default=60, help="seeded sample of the judged queries")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--window", type=int, default=30)
    args = ap.parse_args()

    settings = Settings(data_dir=args.data_dir, reranker={"model": READER_RERANKER})
    kb = resources.open_kb(settings, args.kb)
    hybrid = ConfigRegistry.from_file(None).resolve("hybrid", settings.retrieval).settings
    retriever = kb_retriever(settings, kb, hybrid)
    reranker, _ = configured_reranker(settings, kb.embedder)
    assert reranker is not None
    questions, gold = load_inputs(args.queries, args.qrels, args.sections)
    judged = [q for q in questions if has_relevant(gold.qrels.get(q.qid, {}))]
    sample = random.Random(args.seed).sample(judged, min(args.n, len(judged)))

    rows: list[tuple[float, float, float, float]] = []
    ms: list[float] = []
    passages = 0
    for q in sample:
        hits = retriever.retrieve(q.text, top_k=args.window).hits[: args.window]
        start = time.perf_counter()
        reranked = reranker.rerank(q.text, hits)
        ms.append((time.perf_counter() - start) * 1000.0)
        passages += len(hits)
        rels = gold.qrels[q.qid]
        before = ranked_units(hits, gold.mapper, args.window)
        after = ranked_units(reranked, gold.mapper, args.window)
        rows.append(
            (ndcg(before, rels, 10), ndcg(after, rels, 10), recall(before, rels, 10),
             recall(after, rels, 10))
        )  # fmt: skip
        print(f"{len(rows)}/{len(sample)} {q.qid} {ms[-1]:.0f} ms", *rows[-1], flush=True)

    m = np.array(rows)
    rng = np.random.default_rng(args.seed)
    print(f"\n{args.kb}: {len(sample)} of {len(judged)} judged queries (seed {args.seed}), "
          f"window {args.window}, {passages / len(sample):.1f} passages a query\n")  # fmt: skip
    print("| measure | hybrid | hybrid + reader rerank | difference (95% bootstrap) | "
          "better / worse queries |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for name, b, a in (("nDCG@10", 0, 1), ("recall@10", 2, 3)):
        diff = m[:, a] - m[:, b]
        boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(2000)]
        lo, hi = np.percentile(boots, [2.5, 97.5])
        print(f"| {name} | {m[:, b].mean():.4f} | {m[:, a].mean():.4f} | "
              f"{diff.mean():+.4f} ({lo:+.4f}…{hi:+.4f}) | "
              f"{int((diff > 1e-9).sum())} / {int((diff < -1e-9).sum())} |")  # fmt: skip
    print(f"\nrerank ms/query p50 {pct(ms, 50):.0f}, p95 {pct(ms, 95):.0f}; "
          f"ms/passage {sum(ms) / max(passages, 1):.1f} (mean)")  # fmt: skip


if __name__ == "__main__":
    main()
