"""Reports of ``ragchat eval conversations``: the terminal tables (retrieval by query kind and
turn group, answers by turn group), ``turns.csv`` and ``summary.json``."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragchat.eval.answers_io import fmt_cell
from ragchat.eval.conversations import GROUPS, QUERY_KINDS, ConversationRun

RETRIEVAL_COLUMNS = ("nDCG@10", "MRR@10", "R@1", "R@5", "R@10", "R@100")
_KIND_LABEL = {
    "agent": "agent (its own reformulation)",
    "raw": "raw message (lower bound)",
    "topic": "topic written in (upper bound)",
}


def print_conversations(run: ConversationRun, console: Console) -> None:
    s = run.summary
    retrieval = Table(
        title=f"conversation eval — {run.kb} ({run.conversations} conversations, agent "
        f"{run.agent}, backend {run.backend}): retrieval per judged turn"
    )
    for column in ("turns", "query", "n", *RETRIEVAL_COLUMNS):
        retrieval.add_column(column, justify="left" if column in ("turns", "query") else "right")
    for group in GROUPS:
        kinds = s[group]["retrieval"]
        for kind in QUERY_KINDS:
            if kind not in kinds:
                continue
            m = kinds[kind]
            retrieval.add_row(
                group,
                _KIND_LABEL[kind],
                str(int(m["turns"])),
                *(fmt_cell(m[c]) for c in RETRIEVAL_COLUMNS),
            )
        if "agent_vs_topic_ndcg" in s[group]:
            retrieval.add_row(
                group, "agent / topic nDCG@10", "", fmt_cell(s[group]["agent_vs_topic_ndcg"], True)
            )
        retrieval.add_section()
    console.print(retrieval)

    answers = Table(title="answers per turn (as `eval answers` scores them)")
    answers.add_column("metric")
    for group in GROUPS:
        answers.add_column(group, justify="right")

    def row(name: str, key: str, pct: bool = False) -> None:
        cells = []
        for group in GROUPS:
            a = s[group]["answers"]
            cells.append(fmt_cell(a.get(key) if a else None, pct))
        answers.add_row(name, *cells)

    answers.add_row("turns", *(str(s[g]["turns"]) for g in GROUPS))
    answers.add_row("agent searched", *(fmt_cell(s[g]["searched_rate"], True) for g in GROUPS))
    row("NO_ANSWER rate", "no_answer_rate", True)
    row("ROUGE-L F1 (answered, with reference)", "rougeL_f1")
    row("embedding similarity (answered, with reference)", "similarity")
    row("citations all valid", "citations_valid_rate", True)
    row("≥1 citation", "cited_rate", True)
    row("groundedness", "groundedness", True)
    answers.add_row(
        "latency p50 / p95 ms",
        *(
            f"{a['latency_ms']['p50']:.0f} / {a['latency_ms']['p95']:.0f}" if a else "—"
            for a in (s[g]["answers"] for g in GROUPS)
        ),
    )
    console.print(answers)
    for note in run.notes:
        console.print(f"[dim]{note}[/]")


CSV_FIELDS = (
    "cid", "turn", "gold", "searched", *(f"{k}_ndcg@10" for k in QUERY_KINDS),
    *(f"{k}_mrr@10" for k in QUERY_KINDS), "no_answer", "citations", "citations_valid",
    "groundedness", "rouge_l", "similarity", "latency_ms", "message", "agent_query",
    "topic_query", "reply",
)  # fmt: skip


def write_conversations(run: ConversationRun, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out_dir / "turns.csv", "json": out_dir / "summary.json"}
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for r in run.records:
            a = r.answer
            row: dict[str, Any] = {
                "cid": r.cid,
                "turn": r.turn,
                "gold": r.gold,
                "searched": r.searched,
                "no_answer": a.no_answer,
                "citations": a.citations,
                "citations_valid": a.citations_valid,
                "groundedness": a.groundedness,
                "rouge_l": a.rouge_l,
                "similarity": a.similarity,
                "latency_ms": a.latency_ms,
                "message": r.message,
                "agent_query": r.agent_query,
                "topic_query": r.topic_query,
                "reply": a.reply,
            }
            for kind in QUERY_KINDS:
                m = r.metrics.get(kind)
                row[f"{kind}_ndcg@10"] = m["nDCG@10"] if m else None
                row[f"{kind}_mrr@10"] = m["MRR@10"] if m else None
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    paths["json"].write_text(json.dumps(run.to_json(), indent=2) + "\n", encoding="utf-8")
    return paths
