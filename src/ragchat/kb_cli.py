"""``ragchat kb``: list, inspect and delete knowledge bases, or remove documents from one.

Thin like ``ragchat.cli``, which mounts ``kb_app``; the index modules are imported inside the
commands so that CLI start-up stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragchat.cli_common import DataDir, console, exit_on_error, load_settings

kb_app = typer.Typer(no_args_is_help=True, help="Manage knowledge bases.")


@kb_app.command("list")
def kb_list(data_dir: DataDir = None) -> None:
    """List knowledge bases with their sizes."""
    from ragchat.index import stores

    settings = load_settings(data_dir)
    with exit_on_error():
        vs = settings.vector_store
        where = settings.kb_root if vs.backend == "embedded" else vs.url or settings.qdrant_path
        table = Table(title=f"knowledge bases in {where} ({vs.backend})")
        for col in ("name", "documents", "chunks", "model", "updated"):
            table.add_column(col)
        for name in stores.kb_names(settings):
            m = stores.describe_kb(settings, name)
            table.add_row(
                name,
                str(m["documents"]),
                str(m["children"]),
                str(m["embedding_model"]),
                str(m["updated"]),
            )
        console.print(table)


@kb_app.command("stats")
def kb_stats(name: Annotated[str, typer.Argument()], data_dir: DataDir = None) -> None:
    """Counts, model and size on disk of one knowledge base."""
    from ragchat.index import stores
    from ragchat.retrieve.rerank import reranker_status

    settings = load_settings(data_dir)
    with exit_on_error():
        stats = stores.describe_kb(settings, name)
        table = Table(title=name, show_header=False)
        for key, value in stats.items():
            table.add_row(key, str(value))
        table.add_row("reranker", escape(reranker_status(settings)))
        console.print(table)


@kb_app.command("delete")
def kb_delete(
    name: Annotated[str, typer.Argument()],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Delete a whole knowledge base."""
    from ragchat.index import stores

    settings = load_settings(data_dir)
    with exit_on_error():
        if not yes and sys.stdin.isatty():
            typer.confirm(f"Delete knowledge base {name!r}?", abort=True)
        stores.delete_kb(settings, name)
        console.print(f"deleted {name}")


@kb_app.command("remove")
def kb_remove(
    name: Annotated[str, typer.Argument()],
    targets: Annotated[list[str], typer.Argument(help="Document ids or ingested file paths.")],
    data_dir: DataDir = None,
) -> None:
    """Remove documents (by id or by file path) from a knowledge base."""
    from ragchat import resources
    from ragchat.index.ingestion import remove_paths

    settings = load_settings(data_dir)
    with exit_on_error():
        removed = remove_paths(resources.open_kb(settings, name), targets)
        console.print(f"removed {removed} document(s) from {name}")


@kb_app.command("check")
def kb_check(
    name: Annotated[str | None, typer.Argument(help="One knowledge base (default: all).")] = None,
    data_dir: DataDir = None,
) -> None:
    """Say whether each knowledge base opens, and what is wrong when it does not (exit 6).
    Changes nothing; `ragchat kb repair NAME` fixes what it finds."""
    from ragchat import errors
    from ragchat.index import stores

    settings = load_settings(data_dir)
    with exit_on_error():
        names = [name] if name else stores.kb_names(settings)
        broken = []
        for kb in names:
            report = stores.check_kb(settings, kb)
            where = f"generation {report.generation}" if report.generation is not None else ""
            if report.ok:
                console.print(f"[green]ok[/] {kb} {where}".rstrip())
            else:
                broken.append(kb)
                console.print(f"[bold red]broken[/] {kb} {where}".rstrip())
            for problem in report.problems:
                console.print(f"  - {escape(problem)}")
            for note in report.notes:
                console.print(f"  [dim]note: {escape(note)}[/]")
        if broken:
            raise errors.IndexStateError(
                f"{len(broken)} knowledge base(s) cannot be opened: "
                + ", ".join(f"`ragchat kb repair {b}`" for b in broken)
            )


@kb_app.command("repair")
def kb_repair(name: Annotated[str, typer.Argument()], data_dir: DataDir = None) -> None:
    """Make a knowledge base open again: rebuild its indexes and manifest from the chunk store
    and the stored vectors, or roll back to its last consistent generation. Says what it did;
    nothing is re-embedded, so no model is loaded."""
    from ragchat.index import stores

    settings = load_settings(data_dir)
    with exit_on_error():
        for line in stores.repair_kb(settings, name):
            console.print(f"{name}: {escape(line)}")
        report = stores.check_kb(settings, name)
        if report.ok:
            console.print(f"[green]ok[/] {name} opens (generation {report.generation})")


@kb_app.command("migrate")
def kb_migrate(
    name: Annotated[str, typer.Argument()],
    to: Annotated[str, typer.Option("--to", help="Target vector store: qdrant or embedded.")],
    new_name: Annotated[
        str | None, typer.Option("--name", help="Name in the target store (default: the same).")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Copy a knowledge base to the other vector store without re-embedding (vectors, chunks,
    documents, files, manifest). Interrupted, run it again: it resumes. The Qdrant side is the
    one RAGCHAT_VECTOR_STORE__URL / __PATH configure."""
    from ragchat import errors
    from ragchat.cli_common import progress_bars
    from ragchat.index.migrate import migrate
    from ragchat.index.stores import Backend

    settings = load_settings(data_dir)
    with exit_on_error():
        if to not in ("qdrant", "embedded"):
            raise errors.InvalidInput(f"--to must be qdrant or embedded, not {to!r}")
        target: Backend = "qdrant" if to == "qdrant" else "embedded"
        with progress_bars() as progress:
            report = migrate(settings, name, target, new_name=new_name, progress=progress)
        table = Table(title=f"{report.source} → {report.target}", show_header=False)
        for label, value in (
            ("documents", report.documents),
            ("chunks", f"{report.children} searchable, {report.parents} parents"),
            ("files", report.files),
            (
                "resumed",
                f"yes ({report.skipped_documents} documents already copied)"
                if report.resumed
                else "no",
            ),
        ):
            table.add_row(label, str(value))
        console.print(table)


def health(data_dir: DataDir = None) -> None:
    """What this installation runs with: models, LLM backend, knowledge bases.

    One plain line each; nothing is loaded (exit 0)."""
    from ragchat.index import stores
    from ragchat.retrieve.rerank import reranker_status

    settings = load_settings(data_dir)
    with exit_on_error():
        table = Table(title=f"ragchat in {settings.data_dir}", show_header=False)
        table.add_row("embedder", settings.embedding.model)
        table.add_row("reranker", escape(reranker_status(settings)))
        table.add_row("llm", escape(settings.llm_origin))  # which model, and which setting
        for name in stores.kb_names(settings):
            m = stores.describe_kb(settings, name)
            table.add_row(f"kb {name}", f"{m['documents']} documents, {m['children']} vectors")
        console.print(table)
