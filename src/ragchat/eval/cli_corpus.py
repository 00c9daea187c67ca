"""``ragchat eval corpus``: one split of the user-documents corpus (``corpus/`` of a checkout)
asked group by group through the chat engine (``ragchat.eval.corpus``), with the summary split
by kind of document, format, question style and where the answer sits. Registered on
``eval_app`` by ``ragchat.eval.cli``; heavy imports stay inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragchat.cli_common import DataDir, command_scope, console, progress_bars


def corpus(
    folder: Annotated[
        Path, typer.Argument(help="The corpus folder (documents.jsonl, questions.jsonl, docs/).")
    ] = Path("corpus"),
    split: Annotated[str, typer.Option("--split", help="train, val or test.")] = "val",
    group: Annotated[
        list[str] | None, typer.Option("--group", help="Only these groups (repeatable).")
    ] = None,
    messages: Annotated[
        bool, typer.Option("--messages/--no-messages", help="Ask the everyday messages too.")
    ] = True,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Output folder (default: <data-dir>/eval/corpus-<split>)."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Ask one split of the corpus through the chat engine, a knowledge base per group of
    documents: key facts, right place, refusals, wrong refusals, follow-ups, safety replies to
    everyday messages, latency; by kind, format and question style."""
    import asyncio

    from ragchat import resources
    from ragchat.eval.corpus import ask_split, load_corpus
    from ragchat.eval.documents import summarise_replies
    from ragchat.eval.documents_io import DocumentsRun, print_documents, write_documents
    from ragchat.llm.factory import build_chat_model

    with command_scope(data_dir) as settings:
        data = load_corpus(folder)
        embedder = resources.embedder(settings)
        with progress_bars() as progress:
            replies = asyncio.run(
                ask_split(
                    settings,
                    embedder,
                    data,
                    split,
                    groups=group or (),
                    chat_model=build_chat_model(settings),
                    messages=messages,
                    progress=progress,
                )
            )
        backend = settings.llm.backend
        run = DocumentsRun(
            f"corpus {split}", "documents", backend, summarise_replies(replies), replies
        )
        print_documents(run, console)
        paths = write_documents(run, output or settings.data_dir / "eval" / f"corpus-{split}")
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))
