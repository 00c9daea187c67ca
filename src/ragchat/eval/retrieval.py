"""Runs named retrieval configurations over a query set and collects per-query records.

Nothing here opens a knowledge base or reads the environment: the caller passes a factory that
builds a retriever for a ``RetrievalSettings``, so tests can plug in a fake and the CLI the real
pipeline.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ragchat.errors import ModelLoadError
from ragchat.eval.configs import NamedConfig
from ragchat.eval.data import CorpusUnits, Qrels, Query, UnitMapper, ranked_units
from ragchat.eval.metrics import (
    METRIC_NAMES,
    first_relevant_rank,
    has_relevant,
    latency_stats,
    mean_metrics,
    query_metrics,
)
from ragchat.retrieve.base import Retriever
from ragchat.settings import RetrievalSettings
from ragchat.types import RetrievalResult

log = logging.getLogger(__name__)

RetrieverFactory = Callable[[RetrievalSettings], Retriever]
Progress = Callable[[str, int, int], None]

DEPTH = 100  # hits asked for: Recall@100 needs a hundred units
REFUSAL_K = 10  # a refusal is wrong when a relevant unit was in this many top units
# Reported latency steps; "search" is the first-stage lookups of both indexes together.
STEP_GROUPS: dict[str, tuple[str, ...]] = {
    "total": ("total",),
    "embed": ("embed",),
    "search": ("dense", "bm25"),
    "fusion": ("fusion",),
    "expand": ("expand",),
    "rerank": ("rerank",),
    "post": ("post",),
}


@dataclass(frozen=True)
class Gold:
    """Relevance judgements over unit ids and how a chunk maps to units."""

    qrels: Qrels
    mapper: UnitMapper
    kind: str  # "corpus" or "sections"


@dataclass
class QueryRecord:
    qid: str
    config: str
    metrics: dict[str, float]
    first_relevant: int | None
    no_answer: bool
    wrong_refusal: bool
    relevance: float
    latency: dict[str, float]  # ms per reported step (0 when the step did not run)


@dataclass
class ConfigSummary:
    name: str
    settings: dict[str, Any]
    queries: int
    metrics: dict[str, float]
    no_answer_rate: float
    wrong_refusal_rate: float
    latency: dict[str, dict[str, float]]  # step → p50 / p95 / max, ms
    notes: list[str] = field(default_factory=list)


@dataclass
class EvalRun:
    kb: str
    gold: str
    depth: int
    queries: int
    skipped_no_qrels: int  # queries whose qrels have no relevant unit (or none at all)
    qrels_without_query: int  # judged query ids missing from the queries file
    summaries: list[ConfigSummary]
    records: list[QueryRecord]
    skipped_configs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Everything but the per-query records (those go to ``per_query.csv``)."""
        data = asdict(self)
        del data["records"]
        data["metric_names"] = list(METRIC_NAMES)
        return data


def step_latency(timings: Mapping[str, float]) -> dict[str, float]:
    """Pipeline timings → the reported steps; unknown steps are kept under their own name."""
    known = {key for keys in STEP_GROUPS.values() for key in keys}
    out = {
        step: sum(float(timings.get(k, 0.0)) for k in keys) for step, keys in STEP_GROUPS.items()
    }
    out.update({k: float(v) for k, v in timings.items() if k not in known})
    return out


def select_queries(
    queries: Sequence[Query], qrels: Qrels, limit: int | None = None
) -> tuple[list[Query], int]:
    """The judged queries in file order (at most ``limit``), and how many were skipped for
    having no relevant judgement."""
    judged = [q for q in queries if has_relevant(qrels.get(q.qid, {}))]
    skipped = len(queries) - len(judged)
    return (judged if limit is None else judged[: max(limit, 0)]), skipped


def _reranker_missing(result: RetrievalResult) -> bool:
    return any(note.startswith("rerank skipped") for note in result.notes)


def evaluate_config(
    config: NamedConfig,
    retriever: Retriever,
    queries: Sequence[Query],
    gold: Gold,
    *,
    depth: int = DEPTH,
    refusal_k: int = REFUSAL_K,
    progress: Progress | None = None,
) -> tuple[ConfigSummary, list[QueryRecord]]:
    """One configuration over all queries. Ranking metrics use the hits whether or not the
    gate fired; the gate only feeds the NO_ANSWER and wrong-refusal rates."""
    records: list[QueryRecord] = []
    for done, query in enumerate(queries, start=1):
        result = retriever.retrieve(query.text, top_k=depth, filters=None)
        rels = gold.qrels[query.qid]
        ranked = ranked_units(result.hits, gold.mapper, depth)
        first = first_relevant_rank(ranked, rels)
        hit_at_k = first is not None and first <= refusal_k
        records.append(
            QueryRecord(
                qid=query.qid,
                config=config.name,
                metrics=query_metrics(ranked, rels),
                first_relevant=first,
                no_answer=result.no_answer,
                wrong_refusal=result.no_answer and hit_at_k,
                relevance=float(result.relevance),
                latency=step_latency(result.timings),
            )
        )
        if progress is not None:
            progress(config.name, done, len(queries))
    n = max(len(records), 1)
    steps = sorted({s for r in records for s in r.latency}, key=_step_order)
    summary = ConfigSummary(
        name=config.name,
        settings=config.settings.model_dump(),
        queries=len(records),
        metrics=mean_metrics([r.metrics for r in records]),
        no_answer_rate=sum(r.no_answer for r in records) / n,
        wrong_refusal_rate=sum(r.wrong_refusal for r in records) / n,
        latency={s: latency_stats([r.latency.get(s, 0.0) for r in records]) for s in steps},
    )
    return summary, records


def _step_order(step: str) -> tuple[int, str]:
    order = list(STEP_GROUPS)
    return (order.index(step) if step in order else len(order), step)


def run_evaluation(
    configs: Sequence[NamedConfig],
    factory: RetrieverFactory,
    queries: Sequence[Query],
    gold: Gold,
    *,
    kb: str = "",
    limit: int | None = None,
    depth: int = DEPTH,
    reranker_available: bool = True,
    progress: Progress | None = None,
) -> EvalRun:
    """Every configuration over the judged queries. A configuration that needs a reranker is
    skipped with a note when none is available (known up front, or noticed on the warm-up
    query) rather than silently measured without one."""
    selected, skipped = select_queries(queries, gold.qrels, limit)
    known = {q.qid for q in queries}
    run = EvalRun(
        kb=kb,
        gold=gold.kind,
        depth=depth,
        queries=len(selected),
        skipped_no_qrels=skipped,
        qrels_without_query=sum(1 for qid in gold.qrels if qid not in known),
        summaries=[],
        records=[],
    )
    if not selected:
        run.notes.append("no query has a relevant judgement: nothing to evaluate")
        return run
    for config in configs:
        if config.needs_reranker and not reranker_available:
            run.skipped_configs[config.name] = "needs a reranker and none could be loaded"
            continue
        try:
            retriever = factory(config.settings)
        except ModelLoadError as exc:
            if not config.needs_reranker:
                raise
            run.skipped_configs[config.name] = f"reranker could not be loaded: {exc}"
            continue
        # Warm-up (not measured): first-call costs would otherwise land in the p95/max.
        warm = retriever.retrieve(selected[0].text, top_k=depth, filters=None)
        if config.needs_reranker and _reranker_missing(warm):
            run.skipped_configs[config.name] = "needs a reranker and none is loaded"
            continue
        summary, records = evaluate_config(
            config, retriever, selected, gold, depth=depth, progress=progress
        )
        run.summaries.append(summary)
        run.records.extend(records)
    if isinstance(gold.mapper, CorpusUnits) and gold.mapper.missing:
        run.notes.append(
            f"{gold.mapper.missing} hits had no corpus_id metadata and cannot match a qrel: "
            "was the knowledge base ingested from the corpus.jsonl the qrels refer to?"
        )
    for name, reason in run.skipped_configs.items():
        log.info("skipped configuration %s: %s", name, reason)
    return run
