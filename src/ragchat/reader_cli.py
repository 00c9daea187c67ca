"""``ragchat reader train``: rebuilds the shipped reader model from the corpus of a checkout
(``corpus/``), seeded, and prints what it chose on val and its figures. Heavy imports stay
inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragchat.cli_common import DataDir, command_scope, console

reader_app = typer.Typer(no_args_is_help=True, help="The trained answer scorer.")


@reader_app.command("train")
def train_command(
    folder: Annotated[
        Path, typer.Argument(help="The corpus folder (documents.jsonl, questions.jsonl, docs/).")
    ] = Path("corpus"),
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Where to write the model (default: <data-dir>/reader)."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option("--cache", help="Keep built examples here between runs (per group)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 34,
    data_dir: DataDir = None,
) -> None:
    """Retrain the reader (seeded): fit on train, choose on val, never read test.

    Copy the written folder over ragchat/reader/data to ship it, or point
    RAGCHAT_AGENTS__READER_MODEL at it."""
    import json

    from ragchat import resources
    from ragchat.eval.reader.train import train

    with command_scope(data_dir) as settings:
        out = output or settings.data_dir / "reader"
        card = train(
            settings, resources.embedder(settings), folder, out,
            cache=cache, seed=seed, progress=console.print,
        )  # fmt: skip
        console.print_json(json.dumps(card.to_json()["choices"]))
        console.print_json(json.dumps(card.figures))
