"""Glue of ``ragchat eval answers``: the PubMedQA knowledge base, the engine with one ``rag``
agent, and the reports (terminal table, ``answers.csv``, ``summary.json``)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragchat.agents.config import AgentConfig, AppConfig, KnowledgeBaseConfig, load_config
from ragchat.embed.base import Embedder
from ragchat.errors import ConfigError
from ragchat.eval.answers import AnswerRun
from ragchat.ingestion.ingest import IngestReport, ingest_paths
from ragchat.ingestion.job import chunker_for
from ragchat.settings import Settings
from ragchat.vectorstores import factory as stores

AGENT = "answerer"


def ensure_corpus_kb(
    settings: Settings, embedder: Embedder, records: Sequence[dict[str, str]], kb: str
) -> IngestReport:
    """Writes ``records`` to ``<data-dir>/eval/<kb>-corpus.jsonl`` and ingests it into ``kb``;
    an unchanged file is only hashed, so a second run reuses the knowledge base."""
    path = settings.data_dir / "eval" / f"{kb}-corpus.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    base = stores.open_or_create_kb(settings, kb, embedder)
    try:
        return ingest_paths(base, [path], chunker_for(base, settings.chunking))
    finally:
        base.close()


def app_config(
    kb: str, agent: str | None, config_file: Path | None, kind: str = "rag"
) -> tuple[AppConfig, str]:
    """An agents config file and one of its agents, or one agent of ``kind`` over ``kb``."""
    if config_file is not None:
        config = load_config(config_file)
        name = agent or next((n for n, a in config.agents.items() if a.knowledge_base), "")
        if name not in config.agents:
            raise ConfigError(f"{config_file}: no agent {name!r} to evaluate (use --agent)")
        return config, name
    name = agent or AGENT
    config = AppConfig(
        knowledge_bases={kb: KnowledgeBaseConfig()},
        agents={
            name: AgentConfig(
                kind=kind,
                knowledge_base=kb,
                description=f"Answers questions from the {kb} knowledge base.",
                routable=True,
            )
        },
    )
    return config, name


def fmt_cell(value: Any, pct: bool = False) -> str:
    """A metric cell: 4 decimals, or a percentage; "—" when there is none."""
    if value is None:
        return "—"
    return f"{100 * value:.1f}%" if pct else f"{value:.4f}"


def print_answers(run: AnswerRun, console: Console) -> None:
    s = run.summary
    table = Table(
        title=f"answer eval — {run.kb} ({run.questions} questions, agent {run.agent}, "
        f"backend {run.backend})"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows: list[tuple[str, str]] = [
        ("answered", f"{s['answered']}/{s['questions']}"),
        ("NO_ANSWER rate", fmt_cell(s["no_answer_rate"], True)),
        ("ROUGE-L F1 (answered)", fmt_cell(s["rougeL_f1"])),
        ("ROUGE-L F1 (all, NO_ANSWER = 0)", fmt_cell(s["rougeL_f1_all"])),
        ("embedding similarity (answered)", fmt_cell(s["similarity"])),
        ("citations all valid", fmt_cell(s["citations_valid_rate"], True)),
        ("≥1 citation", fmt_cell(s["cited_rate"], True)),
        ("groundedness", fmt_cell(s["groundedness"], True)),
    ]
    if "evidence_hit_rate" in s:
        rows.append(("evidence hit (own abstract)", fmt_cell(s["evidence_hit_rate"], True)))
    if "gold_cited_rate" in s:
        rows.append(("gold cited (reference document cited)", fmt_cell(s["gold_cited_rate"], True)))
    lat = s["latency_ms"]
    rows.append(("latency p50 / p95 / max", f"{lat['p50']:.0f} / {lat['p95']:.0f} / "
                 f"{lat['max']:.0f} ms"))  # fmt: skip
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    for note in run.notes:
        console.print(f"[dim]{note}[/]")


CSV_FIELDS = (
    "qid", "agent", "no_answer", "citations", "citations_valid", "rouge_l", "similarity",
    "groundedness", "evidence_hit", "gold_cited", "latency_ms", "problems", "cited_ids", "question",
    "reply", "reference",
)  # fmt: skip


def write_answers(run: AnswerRun, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out_dir / "answers.csv", "json": out_dir / "summary.json"}
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for r in run.records:
            row = {k: getattr(r, k) for k in CSV_FIELDS}
            row["problems"] = "; ".join(r.problems)
            row["cited_ids"] = " ".join(r.cited_ids)
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    paths["json"].write_text(json.dumps(run.to_json(), indent=2) + "\n", encoding="utf-8")
    return paths
