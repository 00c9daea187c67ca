"""Glue of ``ragchat eval documents``: a fresh knowledge base from a folder (the ingestion path
uploads use), the engine with one ``conversational_rag`` agent over it, and the reports
(terminal tables, ``summary.json``, ``replies.csv``)."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragchat.embed.base import Embedder
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.eval.documents import Reply
from ragchat.ingestion.ingest import IngestReport, ingest_paths
from ragchat.ingestion.job import chunker_for
from ragchat.settings import Settings
from ragchat.vectorstores import factory as stores


@dataclass
class DocumentsRun:
    kb: str
    agent: str
    backend: str
    summary: dict[str, Any]
    replies: list[Reply] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "replies"}


def fresh_kb(settings: Settings, embedder: Embedder, folder: Path, kb: str) -> IngestReport:
    """Deletes ``kb`` if it exists and ingests every file of ``folder`` into a new one, as an
    upload does (``ingest_paths`` with the configured chunker)."""
    with contextlib.suppress(KnowledgeBaseNotFound):
        stores.delete_kb(settings, kb)
    base = stores.open_or_create_kb(settings, kb, embedder)
    try:
        return ingest_paths(base, [folder], chunker_for(base, settings.chunking))
    finally:
        base.close()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def print_documents(run: DocumentsRun, console: Console) -> None:
    s = run.summary
    a, u = s["answerable"], s["unanswerable"]
    lat = s["latency_ms"]
    head = Table(title=f"documents eval — {run.kb} (agent {run.agent}, backend {run.backend})")
    head.add_column("measure")
    head.add_column("value", justify="right")
    for name, value in (
        (f"key facts (answerable, n={a['n']})", _pct(a["key_facts"])),
        ("key-fact recall (facts found / expected)", _pct(a["fact_recall"])),
        ("right place cited", _pct(a["right_place"])),
        (f"refused (unanswerable, n={u['n']})", _pct(u["refused"])),
        ("wrongly refused (answerable)", _pct(a["wrong_refusal"])),
        ("follow-up key facts", _pct(s["follow_up_key_facts"])),
        ("latency p50 / p95", f"{lat['p50']:.0f} / {lat['p95']:.0f} ms"),
    ):
        head.add_row(name, value)
    console.print(head)
    split = Table(title="by where the answer sits (answerable) and by conversation turn")
    for column in ("split", "n", "key facts", "right place", "wrongly refused"):
        split.add_column(column, justify="left" if column == "split" else "right")
    rows = list(s["by_where"].items()) + list(s["conversations"].items())
    for name, r in rows:
        split.add_row(
            name,
            str(r["n"]),
            _pct(r["key_facts"]),
            _pct(r["right_place"]),
            _pct(r["wrong_refusal"]),
        )
    console.print(split)
    for note in run.notes:
        console.print(f"[dim]{note}[/]")


CSV_FIELDS = (
    "qid", "kind", "where", "refused", "facts", "found", "right_place", "latency_ms",
    "question", "search_query", "reply", "locations", "safety", "tags",
)  # fmt: skip


def write_documents(run: DocumentsRun, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out_dir / "replies.csv", "json": out_dir / "summary.json"}
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for r in run.replies:
            row = {k: getattr(r, k) for k in CSV_FIELDS}
            row["locations"] = " | ".join(r.locations)
            row["tags"] = json.dumps(r.tags, sort_keys=True) if r.tags else ""
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    paths["json"].write_text(json.dumps(run.to_json(), indent=2) + "\n", encoding="utf-8")
    return paths


def misses(replies: Sequence[Reply]) -> list[Reply]:
    """Replies that lost a measure: a key fact missing, the wrong place, a wrong refusal or an
    unanswerable question answered."""
    out = []
    for r in replies:
        if r.kind == "unanswerable":
            if not r.refused:
                out.append(r)
        elif r.facts and (not r.all_facts or r.right_place is False):
            out.append(r)
    return out
