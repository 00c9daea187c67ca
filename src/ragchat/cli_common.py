"""What the ``ragchat`` command modules share: the consoles, settings with logging set up, the
``RagchatError`` → exit code mapping, progress bars and the common options.

A module of its own so that the sub-apps (``ragchat.kb_cli``, ``ragchat.eval.cli``) can use
these at import time without importing ``ragchat.cli``, which imports them to mount them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragchat import errors
from ragchat.settings import Settings

console = Console()
err = Console(stderr=True)

# RagchatError becomes an exit code here and nowhere else (first matching class wins).
EXIT_CODES: list[tuple[type[errors.RagchatError], int]] = [
    (errors.ConfigError, 2),
    (errors.InvalidInput, 2),
    (errors.KnowledgeBaseNotFound, 3),
    (errors.DocumentNotFound, 3),
    (errors.IngestError, 4),
    (errors.ModelLoadError, 5),
    (errors.IndexStateError, 6),
    (errors.RetrievalError, 7),
    (errors.DataDirInUse, 8),
    (errors.PortInUse, 9),
    (errors.RagchatError, 1),
]

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", help="Data directory (default: $RAGCHAT_DATA_DIR or ./ragchat-data)."
    ),
]
KbName = Annotated[str, typer.Option("--kb", help="Knowledge base name.")]


def load_settings(data_dir: Path | None) -> Settings:
    """Settings (``--data-dir`` overriding), with logging configured at their level."""
    settings = Settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("sentence_transformers", "transformers", "httpx", "huggingface_hub", "faiss"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # A missing cross-encoder is said once, plainly, by `ragchat health` and `kb stats`, not
    # by every command that searches; ingestion errors are printed by the ingest command.
    logging.getLogger("ragchat.retrieve.rerank").setLevel(logging.ERROR)
    logging.getLogger("ragchat.ingestion.ingest").setLevel(logging.ERROR)
    if settings.crash_at:
        from ragchat.crashpoints import arm

        arm(settings.crash_at)
    return settings


@contextmanager
def exit_on_error() -> Iterator[None]:
    """Prints a ``RagchatError`` raised inside and exits with its ``EXIT_CODES`` code. The
    message prints as written: hints such as ``pip install 'ragchat[qdrant]'`` are not
    console markup."""
    try:
        yield
    except errors.RagchatError as exc:
        code = next(c for cls, c in EXIT_CODES if isinstance(exc, cls))
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(code) from None


@contextmanager
def command_scope(data_dir: Path | None) -> Iterator[Settings]:
    """``load_settings`` then ``exit_on_error`` around the body: one command's run."""
    settings = load_settings(data_dir)
    with exit_on_error():
        yield settings


@contextmanager
def progress_bars() -> Iterator[Callable[[str, int, int], None]]:
    """A ``progress(stage, done, total)`` callback drawing one bar per stage on stderr (only
    when stderr is a terminal)."""
    bars: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description:>8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
        disable=not err.is_terminal,
    ) as prog:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in bars:
                bars[stage] = prog.add_task(stage, total=total)
            prog.update(bars[stage], completed=done, total=total)

        yield update
