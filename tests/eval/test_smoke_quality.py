"""Retrieval quality smoke test: the default configuration on a fixed SciFact subset must not
regress below a recorded floor.

The subset is read from ``../shared/data/scifact`` at test time (never copied into the repo): the
first ``N_QUERIES`` judged train claims, their gold abstracts, and ``N_OTHER`` hard distractors
(the claims' best BM25 matches that are not gold). It is embedded with the real model (the packaged
all-MiniLM-L6-v2) through the real ingestion path, and evaluated with the harness functions.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from ragchat.eval.configs import NamedConfig
from ragchat.eval.data import CorpusUnits, Query, load_qrels, load_queries
from ragchat.eval.retrieval import Gold, evaluate_config, select_queries
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.retrieve.factory import build_retriever
from ragchat.settings import Settings
from ragchat.vectorstores.bm25 import BM25Index
from ragchat.vectorstores.embedded.kb import KnowledgeBase

SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"
N_QUERIES = 40
N_OTHER = 400
# Measured on this subset with settings.retrieval (hybrid, min-max, alpha 0.5, no reranker
# loadable offline): nDCG@10 0.9144, MRR@10 0.8927, R@10 1.0 (docs/benchmarks.md, "Retrieval
# quality"). The floors leave 0.03 for numeric noise across machines and library versions.
NDCG_FLOOR = 0.88
MRR_FLOOR = 0.86

pytestmark = pytest.mark.slow


def subset_corpus(
    corpus: Path, queries: list[Query], gold_ids: set[str], n_other: int
) -> list[str]:
    """JSONL lines of the gold records plus ``n_other`` hard distractors: the best BM25 matches
    of the queries that are not gold, taken round-robin by rank (every query's best, then
    every query's second ...), so each query meets its near misses. BM25 ties break by file
    order: the subset is the same on every run."""
    lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    index = BM25Index()
    index.add(
        np.arange(len(records), dtype=np.int64),
        [f"{r.get('title') or ''}\n{r.get('text') or ''}" for r in records],
    )
    ranked = [index.search(q.text, n_other + 50)[1] for q in queries]
    chosen: dict[int, None] = {}
    for rank in range(n_other + 50):
        for labels in ranked:
            if rank < len(labels) and str(records[labels[rank]]["_id"]) not in gold_ids:
                chosen.setdefault(int(labels[rank]), None)
            if len(chosen) == n_other:
                break
        if len(chosen) == n_other:
            break
    gold = [i for i, r in enumerate(records) if str(r["_id"]) in gold_ids]
    return [lines[i] for i in sorted([*gold, *chosen])]


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"SciFact data not found at {SCIFACT}")
def test_default_configuration_quality_on_scifact_subset(tmp_path: Path) -> None:
    start = time.perf_counter()
    qrels = load_qrels(SCIFACT / "qrels.train.tsv")
    queries, _ = select_queries(load_queries(SCIFACT / "queries.train.jsonl"), qrels, N_QUERIES)
    gold_ids = {doc for q in queries for doc, rel in qrels[q.qid].items() if rel >= 1}
    lines = subset_corpus(SCIFACT / "corpus.jsonl", queries, gold_ids, N_OTHER)
    assert len(lines) == len(gold_ids) + N_OTHER
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")

    settings = Settings(data_dir=tmp_path / "data")
    from ragchat.embed.factory import load_embedder

    kb = KnowledgeBase.create(settings.kb_root, "smoke", load_embedder(settings))
    report = ingest_paths(kb, [corpus], Chunker(settings.chunking))
    assert not report.errors and report.documents == len(lines)

    config = NamedConfig("default", settings.retrieval)
    retriever = build_retriever(settings, kb, settings.retrieval)
    summary, records = evaluate_config(
        config, retriever, queries, Gold(qrels, CorpusUnits(), "corpus")
    )
    elapsed = time.perf_counter() - start
    print(
        f"smoke quality: nDCG@10={summary.metrics['nDCG@10']:.4f} "
        f"MRR@10={summary.metrics['MRR@10']:.4f} R@10={summary.metrics['R@10']:.4f} "
        f"({len(records)} queries, {len(lines)} docs, {elapsed:.1f} s)"
    )
    assert len(records) == N_QUERIES
    assert summary.metrics["nDCG@10"] >= NDCG_FLOOR
    assert summary.metrics["MRR@10"] >= MRR_FLOOR
