"""``ragchat kb``: list, inspect and delete knowledge bases, or remove documents from one.

Thin like ``ragchat.cli``, which mounts ``kb_app``; the index modules are imported inside the
commands so that CLI start-up stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragchat.cli_common import DataDir, console, exit_on_error, load_settings
from ragchat.errors import KnowledgeBaseNotFound

if TYPE_CHECKING:
    from ragchat.settings import Settings
    from ragchat.store.rows import KnowledgeBaseRow

kb_app = typer.Typer(no_args_is_help=True, help="Manage knowledge bases.")


@kb_app.command("list")
def kb_list(data_dir: DataDir = None) -> None:
    """List knowledge bases with their sizes."""
    from ragchat.vectorstores import factory as stores

    settings = load_settings(data_dir)
    with exit_on_error():
        store = stores.vector_store(settings)
        table = Table(title=f"knowledge bases in {store.where()} ({store.backend})")
        for col in ("name", "who sees it", "documents", "chunks", "model", "updated"):
            table.add_column(col)
        rows = _created(settings)
        for name in stores.kb_names(settings):
            m = stores.describe_kb(settings, name).manifest
            row = rows.get(name)
            shown = name if row is None or row.name == name else f"{row.name} (stored as {name})"
            table.add_row(
                shown,
                _audience(row),
                str(m.documents),
                str(m.children),
                m.embedding_model,
                m.updated,
            )
        console.print(table)


def _created(settings: Settings) -> dict[str, KnowledgeBaseRow]:
    """The knowledge bases users created over the API, by storage name (none without a
    database to read)."""
    from ragchat.store import build_store

    store = build_store(settings, recover=False)  # the server may be running: touch nothing
    try:
        return {row.storage: row for row in store.list_kbs()}
    finally:
        store.close()


def _audience(row: KnowledgeBaseRow | None) -> str:
    if row is None:
        return "everyone"
    owner = f"user {row.owner_id}" if row.owner_id else "nobody (owner deleted)"
    return f"everyone (owner: {owner})" if row.shared else f"only {owner}"


def _set_shared(name: str, shared: bool, data_dir: Path | None) -> None:
    from ragchat.store import build_store

    settings = load_settings(data_dir)
    with exit_on_error():
        store = build_store(settings, recover=False)
        try:
            row = store.find_kb(name)
            if row is None:
                raise KnowledgeBaseNotFound(
                    f"{name!r} was not created over the API: knowledge bases made with "
                    "`ragchat ingest` and the samples are already shared"
                )
            store.update_kb(row.storage, shared=shared)
        finally:
            store.close()
        who = "everyone" if shared else "only its owner"
        console.print(f"{name}: {who} may see it now")


@kb_app.command("share")
def kb_share(name: Annotated[str, typer.Argument()], data_dir: DataDir = None) -> None:
    """Let everyone see a knowledge base a user created (with its owner's documents)."""
    _set_shared(name, True, data_dir)


@kb_app.command("unshare")
def kb_unshare(name: Annotated[str, typer.Argument()], data_dir: DataDir = None) -> None:
    """Make a user's shared knowledge base private to its owner again."""
    _set_shared(name, False, data_dir)


@kb_app.command("stats")
def kb_stats(name: Annotated[str, typer.Argument()], data_dir: DataDir = None) -> None:
    """Counts, model and size on disk of one knowledge base."""
    from ragchat.retrieve.rerank import reranker_status
    from ragchat.vectorstores import factory as stores

    settings = load_settings(data_dir)
    with exit_on_error():
        stats = stores.describe_kb(settings, name).as_dict()
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
    from ragchat.vectorstores import factory as stores

    settings = load_settings(data_dir)
    with exit_on_error():
        if not yes and sys.stdin.isatty():
            typer.confirm(f"Delete knowledge base {name!r}?", abort=True)
        from ragchat.store import build_store

        store = build_store(settings, recover=False)
        try:
            row = store.find_kb(name)
            if row is None:
                stores.delete_kb(settings, name)
            else:  # created over the API: it may hold no document yet
                if row.storage in stores.kb_names(settings):
                    stores.delete_kb(settings, row.storage)
                store.delete_kb_row(row.storage)
        finally:
            store.close()
        console.print(f"deleted {name}")


@kb_app.command("remove")
def kb_remove(
    name: Annotated[str, typer.Argument()],
    targets: Annotated[list[str], typer.Argument(help="Document ids or ingested file paths.")],
    data_dir: DataDir = None,
) -> None:
    """Remove documents (by id or by file path) from a knowledge base."""
    from ragchat import resources
    from ragchat.ingestion.ingest import remove_paths

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
    from ragchat.vectorstores import factory as stores

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
    from ragchat.vectorstores import factory as stores

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
    to: Annotated[
        str, typer.Option("--to", help="Target vector store: embedded, qdrant or pgvector.")
    ],
    new_name: Annotated[
        str | None, typer.Option("--name", help="Name in the target store (default: the same).")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Source vector store (default: the configured one; embedded when that is --to).",
        ),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Copy a knowledge base between vector stores without re-embedding (vectors, chunks,
    documents, files, manifest). Interrupted, run it again: it resumes (into pgvector the copy is
    one transaction: an interrupted one left nothing, and starts over). The Qdrant side is the
    one RAGCHAT_VECTOR_STORE__URL / __PATH configure; pgvector's, RAGCHAT_VECTOR_STORE__URL or
    RAGCHAT_DATABASE_URL."""
    from ragchat import errors
    from ragchat.cli_common import progress_bars
    from ragchat.vectorstores.base import BACKENDS
    from ragchat.vectorstores.migrate import migrate

    settings = load_settings(data_dir)
    with exit_on_error():
        for option, given in (("--to", to), ("--from", source)):
            if given is not None and given not in BACKENDS:
                raise errors.InvalidInput(
                    f"{option} must be one of {', '.join(BACKENDS)}, not {given!r}"
                )
        target = next(b for b in BACKENDS if b == to)
        origin = next((b for b in BACKENDS if b == source), None)
        with progress_bars() as progress:
            report = migrate(
                settings, name, target, new_name=new_name, source=origin, progress=progress
            )
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
    from ragchat.retrieve.rerank import reranker_status
    from ragchat.vectorstores import factory as stores

    settings = load_settings(data_dir)
    with exit_on_error():
        table = Table(title=f"ragchat in {settings.data_dir}", show_header=False)
        table.add_row("embedder", settings.embedding.model)
        table.add_row("reranker", escape(reranker_status(settings)))
        table.add_row("llm", escape(settings.llm_origin))  # which model, and which setting
        for name in stores.kb_names(settings):
            m = stores.describe_kb(settings, name).manifest
            table.add_row(f"kb {name}", f"{m.documents} documents, {m.children} vectors")
        console.print(table)
