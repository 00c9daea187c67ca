"""``ragchat kb``: list, inspect and delete knowledge bases, or remove documents from one.

Thin like ``ragchat.cli``, which mounts ``kb_app``; the index modules are imported inside the
commands so that CLI start-up stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.table import Table

from ragchat.cli_common import DataDir, console, exit_on_error, load_settings

kb_app = typer.Typer(no_args_is_help=True, help="Manage knowledge bases.")


@kb_app.command("list")
def kb_list(data_dir: DataDir = None) -> None:
    """List knowledge bases with their sizes."""
    from ragchat.index.kb import KnowledgeBase

    settings = load_settings(data_dir)
    with exit_on_error():
        table = Table(title=f"knowledge bases in {settings.kb_root}")
        for col in ("name", "documents", "chunks", "model", "updated"):
            table.add_column(col)
        for name in KnowledgeBase.names(settings.kb_root):
            m = KnowledgeBase.describe(settings.kb_root, name)
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
    from ragchat.index.kb import KnowledgeBase

    settings = load_settings(data_dir)
    with exit_on_error():
        stats = KnowledgeBase.describe(settings.kb_root, name)
        table = Table(title=name, show_header=False)
        for key, value in stats.items():
            table.add_row(key, str(value))
        console.print(table)


@kb_app.command("delete")
def kb_delete(
    name: Annotated[str, typer.Argument()],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Delete a whole knowledge base."""
    from ragchat.index.kb import KnowledgeBase

    settings = load_settings(data_dir)
    with exit_on_error():
        if not yes and sys.stdin.isatty():
            typer.confirm(f"Delete knowledge base {name!r}?", abort=True)
        KnowledgeBase.delete(settings.kb_root, name)
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
