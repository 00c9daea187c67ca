"""Options shared by the ``ragchat eval`` command modules (``ragchat.eval.cli`` and
``ragchat.eval.cli_generation``), so that each flag and its help text are written once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

QueriesOpt = Annotated[
    Path | None,
    typer.Option(
        "--queries",
        help='BEIR queries.jsonl ({"_id", "text"} a line); not needed when --sections holds '
        "the questions.",
    ),
]
QrelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--qrels",
        help="BEIR qrels TSV (query-id, corpus-id, score) for KBs ingested from a corpus.jsonl.",
    ),
]
SectionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--sections",
        help="TSV of (question, file, section), or (query-id, file, section) with --queries; "
        "section: heading, p<N> page or HH:MM:SS-HH:MM:SS range. One row per gold section.",
    ),
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", help="Output folder (default: <data-dir>/eval/<kb>).")
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, help="Only the first N judged queries (file order).")
]
ConfigFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--config-file",
        help="TOML/YAML file with \\[retrieval_configs.NAME] tables "
        "(default: settings.config_file).",
    ),
]
