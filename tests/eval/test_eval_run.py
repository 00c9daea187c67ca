import csv
import json
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ragchat.eval.configs import ConfigRegistry
from ragchat.eval.data import CorpusUnits, Query
from ragchat.eval.report import write_reports
from ragchat.eval.retrieval import EvalRun, Gold, run_evaluation, step_latency
from ragchat.settings import RetrievalSettings
from ragchat.types import Chunk, Hit, RetrievalResult


class FakeRetriever:
    """Deterministic stand-in for KBRetriever: a fixed ranking per query text (reversed in bm25
    mode), the gate applied to a fixed relevance, and jittered timings like real ones."""

    def __init__(
        self,
        config: RetrievalSettings,
        rankings: Mapping[str, list[str]],
        relevance: Mapping[str, float],
        *,
        reranker: bool = True,
    ) -> None:
        self.config = config
        self.rankings = rankings
        self.relevance = relevance
        self.reranker = reranker
        self.calls: list[tuple[str, int | None]] = []

    def retrieve(
        self, query: str, *, top_k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> RetrievalResult:
        start = time.perf_counter()
        self.calls.append((query, top_k))
        ids = list(self.rankings.get(query, []))
        if self.config.mode == "bm25":
            ids.reverse()
        hits = [
            Hit(Chunk(f"{cid}#{i}", cid, query, i, metadata={"corpus_id": cid}), 1.0 / (i + 1))
            for i, cid in enumerate(ids)
        ][: top_k or self.config.top_k]
        relevance = self.relevance.get(query, 0.0)
        threshold = self.config.gate_threshold
        notes: list[str] = []
        if self.config.rerank and not self.reranker:
            notes.append("rerank skipped: no reranker loaded")
        jitter = random.random()  # latency differs between runs, like real timings
        timings = {"embed": 1.0 + jitter, "dense": 2.0, "bm25": 0.5, "fusion": 0.25}
        timings["total"] = (time.perf_counter() - start) * 1000.0 + 4.0 + jitter
        return RetrievalResult(
            query=query,
            hits=hits,
            no_answer=not hits or (threshold is not None and relevance < threshold),
            relevance=relevance,
            mode=self.config.mode,
            timings=timings,
            notes=notes,
        )


QUERIES = [Query("q1", "alpha"), Query("q2", "beta"), Query("q3", "gamma"), Query("q4", "delta")]
QRELS = {"q1": {"A": 1}, "q2": {"C": 1}, "q3": {"Z": 1}, "q4": {"A": 0}, "q9": {"A": 1}}
RANKINGS = {
    "alpha": ["A", "A", "B", "C"],  # two chunks of A collapse: relevant at rank 1
    "beta": ["A", "B", "B", "C"],  # relevant C at unit rank 3
    "gamma": ["A", "B"],  # relevant Z never retrieved
}
RELEVANCE = {"alpha": 0.9, "beta": 0.1, "gamma": 0.05}
DEFAULTS = RetrievalSettings(gate_threshold=0.3)


def _run(names: list[str], *, reranker: bool = True, available: bool = True) -> EvalRun:
    registry = ConfigRegistry()
    configs = registry.resolve_many(names, DEFAULTS)

    def factory(config: RetrievalSettings) -> FakeRetriever:
        return FakeRetriever(config, RANKINGS, RELEVANCE, reranker=reranker)

    gold = Gold(QRELS, CorpusUnits(), "corpus")
    return run_evaluation(configs, factory, QUERIES, gold, kb="fake", reranker_available=available)


def test_metrics_rates_and_counts() -> None:
    run = _run(["hybrid", "bm25"])
    assert (run.queries, run.skipped_no_qrels, run.qrels_without_query) == (3, 1, 1)
    hybrid, bm25 = run.summaries
    assert hybrid.metrics["MRR@10"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert hybrid.metrics["R@1"] == pytest.approx(1 / 3)
    assert hybrid.metrics["R@3"] == pytest.approx(2 / 3)
    # beta and gamma are gated; beta had its relevant unit in the top 10: a wrong refusal
    assert hybrid.no_answer_rate == pytest.approx(2 / 3)
    assert hybrid.wrong_refusal_rate == pytest.approx(1 / 3)
    # bm25 (reversed in the fake) puts C first for beta and A last for alpha
    assert bm25.metrics["MRR@10"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    firsts = {(r.config, r.qid): r.first_relevant for r in run.records}
    assert firsts[("hybrid", "q2")] == 3 and firsts[("hybrid", "q3")] is None
    assert set(hybrid.latency) == {"total", "embed", "search", "fusion", "expand", "rerank", "post"}
    assert hybrid.latency["search"]["max"] == pytest.approx(2.5)
    assert hybrid.settings["mode"] == "hybrid" and hybrid.settings["gate_threshold"] == 0.3


def test_step_latency_groups_search_and_keeps_unknown_steps() -> None:
    steps = step_latency({"dense": 2.0, "bm25": 1.0, "total": 5.0, "custom": 0.5})
    assert (steps["search"], steps["total"], steps["rerank"], steps["custom"]) == (3.0, 5.0, 0, 0.5)


def test_reranker_configs_are_skipped_with_a_note() -> None:
    run = _run(["hybrid", "hybrid+rerank"], available=False)
    assert [s.name for s in run.summaries] == ["hybrid"]
    assert "reranker" in run.skipped_configs["hybrid+rerank"]
    # not known up front, but the pipeline reports it on the warm-up query
    run = _run(["hybrid+rerank", "bm25"], reranker=False, available=True)
    assert [s.name for s in run.summaries] == ["bm25"]
    assert list(run.skipped_configs) == ["hybrid+rerank"]


def test_limit_and_retrieval_depth() -> None:
    seen: list[FakeRetriever] = []

    def factory(config: RetrievalSettings) -> FakeRetriever:
        seen.append(FakeRetriever(config, RANKINGS, RELEVANCE))
        return seen[-1]

    configs = ConfigRegistry().resolve_many(["dense"], DEFAULTS)
    run = run_evaluation(configs, factory, QUERIES, Gold(QRELS, CorpusUnits(), "corpus"), limit=2)
    assert run.queries == 2 and [r.qid for r in run.records] == ["q1", "q2"]
    assert {k for _, k in seen[0].calls} == {100}  # top 100 for Recall@100


def test_reports_written(tmp_path: Path) -> None:
    run = _run(["hybrid", "bm25", "hybrid+rerank"], available=False)
    paths = write_reports(run, tmp_path / "out")
    assert {p.name for p in paths.values()} == {
        "summary.csv",
        "summary.json",
        "per_query.csv",
        "quality_latency.png",
        "report.html",
    }
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(paths["csv"].open()))
    assert [r["config"] for r in rows] == ["hybrid", "bm25"]
    assert float(rows[0]["nDCG@10"]) == pytest.approx(run.summaries[0].metrics["nDCG@10"])
    assert {"search_p95_ms", "embed_p50_ms", "p95_ms"} <= set(rows[0])
    per_query = list(csv.DictReader(paths["per_query"].open()))
    assert len(per_query) == 6
    assert per_query[1]["query_id"] == "q2" and per_query[1]["first_relevant_rank"] == "3"
    page = paths["html"].read_text()
    assert "<table>" in page and "<td>hybrid</td>" in page and "MRR@10" in page
    assert '<img alt="' in page and 'src="data:image/png;base64,iVBOR' in page
    assert "skipped hybrid+rerank" in page
    data = json.loads(paths["json"].read_text())
    assert data["skipped_no_qrels"] == 1 and data["summaries"][0]["name"] == "hybrid"


def _strip_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_latency(v) for k, v in value.items() if "latency" not in k}
    if isinstance(value, list):
        return [_strip_latency(v) for v in value]
    return value


def test_two_runs_are_identical_except_latency(tmp_path: Path) -> None:
    names = ["hybrid", "bm25", "dense_first+parents"]
    first = write_reports(_run(names), tmp_path / "a")
    second = write_reports(_run(names), tmp_path / "b")
    a, b = json.loads(first["json"].read_text()), json.loads(second["json"].read_text())
    assert a != b  # latency differs (the fake jitters) ...
    assert _strip_latency(a) == _strip_latency(b)  # ... and nothing else does

    def rows(path: Path) -> list[dict[str, str]]:
        return [{k: v for k, v in r.items() if "ms" not in k} for r in csv.DictReader(path.open())]

    assert rows(first["per_query"]) == rows(second["per_query"])
    assert rows(first["csv"]) == rows(second["csv"])
