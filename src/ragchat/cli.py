"""``ragchat`` command line. Thin: parse, call the library, print.

The ``kb``, ``eval`` and ``chat`` sub-apps live in their own modules and are mounted here;
what the command modules share (settings, the RagchatError → exit code mapping, progress
bars) is in ``ragchat.cli_common``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ragchat import errors
from ragchat.agents.chat_cli import chat_app
from ragchat.cli_common import (
    DataDir,
    KbName,
    console,
    err,
    exit_on_error,
    load_settings,
    progress_bars,
)
from ragchat.eval.cli import eval_app
from ragchat.kb_cli import health, kb_app
from ragchat.reader_cli import reader_app
from ragchat.users_cli import users_app

if TYPE_CHECKING:
    from ragchat.ingestion.ingest import IngestReport

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Self-hosted RAG chat over your documents, offline by default.",
)
app.add_typer(kb_app, name="kb")
app.add_typer(eval_app, name="eval")
app.add_typer(chat_app, name="chat")
app.add_typer(users_app, name="users")
app.add_typer(reader_app, name="reader")
app.command("health")(health)


@app.command()
def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Files or folders: PDF (scans by OCR), Word, PowerPoint, Excel, CSV, HTML, "
            "EPUB, Markdown, WebVTT, text, JSONL corpora, PNG/JPEG/TIFF images (OCR)."
        ),
    ],
    kb: KbName,
    prune: Annotated[
        bool,
        typer.Option(
            help="Also delete documents of files that were "
            "ingested from these folders and no longer exist."
        ),
    ] = False,
    backend: Annotated[str, typer.Option(help="Dense index for a new KB: flat or hnsw.")] = "flat",
    data_dir: DataDir = None,
) -> None:
    """Add documents to a knowledge base (unchanged files are skipped, changed ones replaced)."""
    from ragchat import resources
    from ragchat.ingest.registry import iter_files, supported_types, unsupported_files
    from ragchat.ingestion.ingest import IngestReport, all_unchanged, ingest_job, prune_missing
    from ragchat.ingestion.job import IngestJob, chunker_for, hash_files
    from ragchat.vectorstores.embedded.store import EmbeddedStore
    from ragchat.vectorstores.factory import vector_store

    settings = load_settings(data_dir)
    with exit_on_error():
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise errors.IngestError(", ".join(missing), "no such file or folder")
        for skipped in unsupported_files(paths):
            err.print(f"[yellow]skipped[/] {skipped}")
        if not iter_files(paths):
            raise errors.IngestError(
                " ".join(map(str, paths)),
                f"nothing to ingest: no file of a supported type; supported: {supported_types()}",
            )
        store = vector_store(settings)
        other_case = [n for n in store.names() if n.lower() == kb.lower() and n != kb]
        if other_case:  # names are one without regard to case (the server refuses both)
            raise errors.InvalidInput(
                f"a knowledge base {other_case[0]!r} exists: ingest into it with "
                f"--kb {other_case[0]} (names are the same whatever their case)"
            )
        embedded = isinstance(store, EmbeddedStore)  # its files answer without a model
        files = hash_files(paths)  # once, for the check below and the ingest
        unchanged = None if prune or not embedded else all_unchanged(settings.kb_root / kb, files)
        if unchanged is not None:  # nothing to do: no model to load
            _print_ingest(kb, IngestReport(files=unchanged, unchanged_files=unchanged), 0)
            return
        created = kb not in store.names()
        emb = resources.ingest_embedder(settings)
        base = resources.open_or_create_kb(settings, kb, emb, dense_backend=backend)
        try:
            with progress_bars() as progress:
                job = IngestJob(files, chunker_for(base, settings.chunking))
                report = ingest_job(base, job, progress=progress)
        finally:
            discarded = created and base.child_count() == 0
            if discarded:  # a failed first ingest leaves no empty knowledge base behind
                base.close()
                store.delete(kb)
        folders = [p for p in paths if p.is_dir()]
        pruned = prune_missing(base, folders) if prune and not discarded else 0
        for e in report.errors:
            err.print(f"[yellow]skipped[/] {e}")
        for w in report.warnings:
            err.print(f"[yellow]warning[/] {w}")
        _print_ingest(kb, report, pruned)
        if report.errors and report.files == len(report.errors):
            raise typer.Exit(4)


def _print_ingest(kb: str, report: IngestReport, pruned: int) -> None:
    table = Table(title=f"ingest → {kb}", show_header=False)
    for label, value in [
        (
            "files",
            f"{report.files} ({report.added_files} new, {report.replaced_files} "
            f"changed, {report.unchanged_files} unchanged, {len(report.errors)} failed)",
        ),
        (
            "documents",
            f"{report.documents} added, {report.duplicate_documents} duplicate, "
            f"{report.removed_documents + pruned} removed",
        ),
        ("pages", str(report.pages)),
        ("sections", str(report.sections)),
        ("chunks", f"{report.children} searchable, {report.parents} parents"),
        ("seconds", f"{report.seconds:.1f}"),
    ]:
        table.add_row(label, value)
    console.print(table)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    kb: KbName,
    mode: Annotated[str, typer.Option(help="hybrid, dense, bm25 or dense_first.")] = "",
    top_k: Annotated[int, typer.Option("--top-k", help="Results to show.")] = 5,
    filter_: Annotated[
        list[str] | None,
        typer.Option("--filter", help="key=value metadata filter, e.g. chapter=2 (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Search a knowledge base and show cited passages."""
    from ragchat import resources
    from ragchat.agents.rerankers import kb_retriever

    settings = load_settings(data_dir)
    with exit_on_error():
        retrieval = settings.retrieval
        if mode:
            if mode not in ("hybrid", "dense", "bm25", "dense_first"):
                raise errors.RetrievalError(f"unknown mode {mode!r}")
            retrieval = retrieval.model_copy(update={"mode": mode})
        filters = _parse_filters(filter_ or [])
        base = resources.open_kb(settings, kb)
        retriever = kb_retriever(settings, base, retrieval)
        result = retriever.retrieve(query, top_k=top_k, filters=filters)
        if as_json:
            console.print_json(json.dumps(_result_json(result)))
            return
        _print_result(result)


def _parse_filters(items: list[str]) -> dict[str, Any]:
    filters: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise errors.RetrievalError(f"bad filter {item!r}: use key=value")
        filters.setdefault(key.strip(), []).append(value.strip())
    return filters


def _result_json(result: Any) -> dict[str, Any]:
    return {
        "query": result.query,
        "no_answer": result.no_answer,
        "relevance": result.relevance,
        "mode": result.mode,
        "timings_ms": result.timings,
        "expanded_queries": result.expanded_queries,
        "hits": [
            {
                "chunk_id": h.chunk.chunk_id,
                "score": h.score,
                "scores": h.scores,
                "source": h.chunk.source,
                "location": h.chunk.location(),
                "text": h.chunk.text,
            }
            for h in result.hits
        ],
    }


def _print_result(result: Any) -> None:
    if result.no_answer:
        console.print(
            f"[bold yellow]NO_ANSWER[/] — the knowledge base does not seem to cover this "
            f"(best match relevance {result.relevance:.2f}). Closest passages:"
        )
    table = Table(
        title=f"{result.query!r} ({result.mode}, {result.timings.get('total', 0):.0f} ms)",
        show_lines=True,
    )
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("source")
    table.add_column("passage", ratio=3)
    for i, hit in enumerate(result.hits, 1):
        where = Path(hit.chunk.source.split("#")[0]).name
        loc = hit.chunk.location()
        text = " ".join(hit.chunk.text.split())
        table.add_row(
            str(i),
            f"{hit.score:.3f}",
            f"{where}\n{loc}\n[dim]{hit.chunk.chunk_id[:12]}…{hit.chunk.chunk_id[64:]}[/]",
            text[:400] + ("…" if len(text) > 400 else ""),
        )
    console.print(table)


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8000).")] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Agents config file (TOML/YAML); default: the bundled one."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Server processes (default 1); more than one needs the settings in "
            "docs/deployment.md (PostgreSQL recommended).",
        ),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Run the chat server and web page (ingests the sample knowledge bases on first start)."""
    from ragchat.api.serve import serve as run_server

    settings = load_settings(data_dir)
    with exit_on_error():
        run_server(settings, host=host, port=port, config_file=config, workers=workers)


@app.command()
def demo(data_dir: DataDir = None) -> None:
    """Ingest the bundled sample knowledge bases and answer a few searches."""
    from ragchat import resources
    from ragchat.agents.rerankers import kb_retriever
    from ragchat.ingestion.ingest import ingest_paths
    from ragchat.ingestion.job import chunker_for

    settings = load_settings(data_dir)
    with exit_on_error():
        emb = resources.embedder(settings)
        writer = resources.ingest_embedder(settings, emb)
        for name, folder in resources.sample_sources().items():
            base = resources.open_or_create_kb(settings, name, writer)
            report = ingest_paths(base, [folder], chunker_for(base, settings.chunking))
            console.print(
                f"[bold]{name}[/]: {report.documents} new documents, "
                f"{report.unchanged_files} unchanged files, {base.child_count()} chunks"
            )
        for name, question in DEMO_QUESTIONS:
            retriever = kb_retriever(settings, resources.open_kb(settings, name, emb))
            _print_result(retriever.retrieve(question, top_k=3))


DEMO_QUESTIONS = [
    ("medical", "What is the maximum daily dose of acetaminophen for adults?"),
    ("parenting", "How many hours of sleep does a two-year-old need?"),
    ("medical", "Who won the football world cup in 2010?"),
]


def main() -> None:  # pragma: no cover
    app()
