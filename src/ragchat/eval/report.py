"""Evaluation output: a terminal table, CSV/JSON files, a quality-vs-latency plot and a
self-contained HTML page (CSS inline, plot embedded) that can be mailed or archived as is."""

from __future__ import annotations

import base64
import csv
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from ragchat.eval.metrics import METRIC_NAMES
from ragchat.eval.retrieval import ConfigSummary, EvalRun

SUMMARY_FIELDS = (
    "config",
    "queries",
    *METRIC_NAMES,
    "no_answer_rate",
    "wrong_refusal_rate",
    "p50_ms",
    "p95_ms",
    "max_ms",
)


def _steps(summaries: Sequence[ConfigSummary]) -> list[str]:
    seen: dict[str, None] = {}
    for s in summaries:
        seen.update(dict.fromkeys(s.latency))
    return list(seen)


def summary_rows(run: EvalRun) -> list[dict[str, Any]]:
    """One flat row per configuration: metrics, rates, total latency, then every step's."""
    steps = _steps(run.summaries)
    rows: list[dict[str, Any]] = []
    for s in run.summaries:
        total = s.latency.get("total", {"p50": 0.0, "p95": 0.0, "max": 0.0})
        row: dict[str, Any] = {"config": s.name, "queries": s.queries}
        row.update({m: round(s.metrics[m], 6) for m in METRIC_NAMES})
        row["no_answer_rate"] = round(s.no_answer_rate, 6)
        row["wrong_refusal_rate"] = round(s.wrong_refusal_rate, 6)
        row.update({f"{k}_ms": round(total[k], 2) for k in ("p50", "p95", "max")})
        for step in (s for s in steps if s != "total"):
            stats = s.latency.get(step, {"p50": 0.0, "p95": 0.0, "max": 0.0})
            row.update({f"{step}_{k}_ms": round(stats[k], 2) for k in ("p50", "p95", "max")})
        rows.append(row)
    return rows


def write_csv(path: Path, rows: Sequence[dict[str, Any]], fields: Sequence[str] = ()) -> Path:
    header = list(fields) or (list(rows[0]) if rows else [])
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def per_query_rows(run: EvalRun) -> list[dict[str, Any]]:
    return [
        {
            "query_id": r.qid,
            "config": r.config,
            "first_relevant_rank": "" if r.first_relevant is None else r.first_relevant,
            "ndcg@10": round(r.metrics["nDCG@10"], 6),
            "rr@10": round(r.metrics["MRR@10"], 6),
            "recall@10": round(r.metrics["R@10"], 6),
            "no_answer": int(r.no_answer),
            "wrong_refusal": int(r.wrong_refusal),
            "relevance": round(r.relevance, 6),
            "latency_ms": round(r.latency.get("total", 0.0), 2),
        }
        for r in run.records
    ]


# The terminal table keeps what fits 80 columns, under short headers; summary.csv/json and the
# HTML page keep every metric and step.
TABLE_COLUMNS = (
    ("nDCG", "nDCG@10"),
    ("MRR", "MRR@10"),
    ("R@1", "R@1"),
    ("R@10", "R@10"),
    ("R@100", "R@100"),
)


def print_table(run: EvalRun, console: Console) -> None:
    """Configurations × nDCG@10, MRR@10, R@1/10/100, NO_ANSWER rate and p50/p95 latency (ms).
    Numbers are never truncated, down to 80 columns (a long configuration name wraps)."""
    table = Table(
        title=f"retrieval eval — {run.kb or 'kb'} ({run.queries} queries, {run.gold} gold)",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        caption="nDCG/MRR @10 · NoAns: NO_ANSWER rate · p50/p95: ms · all in summary.csv",
    )
    table.add_column("config", justify="left", overflow="fold", min_width=12)
    for header, _ in TABLE_COLUMNS:
        table.add_column(header, justify="right", no_wrap=True, min_width=5)
    for header in ("NoAns", "p50", "p95"):
        table.add_column(header, justify="right", no_wrap=True, min_width=5)
    names = [m for _, m in TABLE_COLUMNS]
    best = {m: max((s.metrics[m] for s in run.summaries), default=0.0) for m in names}
    for s in run.summaries:
        cells = [
            f"[bold]{s.metrics[m]:.3f}[/]" if s.metrics[m] == best[m] else f"{s.metrics[m]:.3f}"
            for m in names
        ]
        total = s.latency.get("total", {})
        table.add_row(
            s.name,
            *cells,
            f"{s.no_answer_rate:.3f}",
            f"{total.get('p50', 0.0):.0f}",
            f"{total.get('p95', 0.0):.0f}",
        )
    console.print(table)
    for note in _notes(run):
        console.print(f"[yellow]note:[/] {note}")


def _notes(run: EvalRun) -> list[str]:
    notes = [f"skipped {name}: {why}" for name, why in run.skipped_configs.items()]
    if run.skipped_no_qrels:
        notes.append(f"{run.skipped_no_qrels} queries without relevant qrels were skipped")
    if run.qrels_without_query:
        notes.append(f"{run.qrels_without_query} judged query ids are not in the queries file")
    return notes + run.notes


def plot_quality_latency(run: EvalRun, path: Path) -> Path:
    """nDCG@10 against p95 latency, one labelled point per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for s in run.summaries:
        x, y = s.latency.get("total", {}).get("p95", 0.0), s.metrics["nDCG@10"]
        ax.scatter([x], [y], s=30)
        ax.annotate(s.name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("p95 latency per query (ms)")
    ax.set_ylabel("nDCG@10")
    ax.set_title(f"{run.kb or 'kb'}: quality vs latency")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;font-size:14px}"
    "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}th{background:#f0f0f0}"
    "tr:nth-child(even){background:#fafafa}.note{color:#8a5a00}img{max-width:100%}"
)


def _cell(value: Any) -> str:
    return html.escape(f"{value:.3f}" if isinstance(value, float) else str(value))


def html_table(rows: Sequence[dict[str, Any]], fields: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(f)}</th>" for f in fields)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(row.get(f, ''))}</td>" for f in fields) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(title: str, intro: str, table: str, png: Path | None, notes: Sequence[str]) -> str:
    img = ""
    if png is not None:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        img = f'<p><img alt="{html.escape(title)} plot" src="data:image/png;base64,{data}"></p>'
    notes_html = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(intro)}</p>{table}{notes_html}{img}</body></html>\n"
    )


def write_reports(run: EvalRun, out_dir: Path) -> dict[str, Path]:
    """``summary.csv``, ``summary.json``, ``per_query.csv``, ``quality_latency.png`` and
    ``report.html`` under ``out_dir``; returns them by kind."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = summary_rows(run)
    paths = {
        "csv": write_csv(out_dir / "summary.csv", rows),
        "per_query": write_csv(out_dir / "per_query.csv", per_query_rows(run)),
    }
    paths["json"] = out_dir / "summary.json"
    paths["json"].write_text(json.dumps(run.to_json(), indent=2, sort_keys=True) + "\n")
    paths["png"] = plot_quality_latency(run, out_dir / "quality_latency.png")
    intro = (
        f"Knowledge base {run.kb or '?'}; {run.queries} queries with {run.gold} gold; "
        f"top {run.depth} hits collapsed to unique units; latency in ms per query."
    )
    page = html_page(
        f"Retrieval evaluation: {run.kb or 'kb'}",
        intro,
        html_table(rows, SUMMARY_FIELDS),
        paths["png"],
        _notes(run),
    )
    paths["html"] = out_dir / "report.html"
    paths["html"].write_text(page, encoding="utf-8")
    return paths
