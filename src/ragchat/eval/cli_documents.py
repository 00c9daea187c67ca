"""``ragchat eval documents``: a folder of a user's documents, questions about them and
conversations, asked through the chat engine as a user would (``ragchat.eval.documents``).
Registered on ``eval_app`` by ``ragchat.eval.cli``; heavy imports stay inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragchat.cli_common import DataDir, command_scope, console, progress_bars
from ragchat.errors import ConfigError


def documents(
    folder: Annotated[Path, typer.Argument(help="Folder of documents (PDF, Markdown, VTT, text).")],
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="JSONL of questions (facts, where, place; answerable)."),
    ] = None,
    conversations: Annotated[
        Path | None,
        typer.Option("--conversations", help="JSONL of conversations (turns with facts)."),
    ] = None,
    kb: Annotated[
        str, typer.Option("--kb", help="Knowledge base to build (deleted and rebuilt).")
    ] = "eval-documents",
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="A plain agent of this kind answers (default: the knowledge-base agent the "
            "server binds a user's knowledge base to, with its settings).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N questions.")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Output folder (default: <data-dir>/eval/documents-<kb>)."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Ingest a folder into a fresh knowledge base and ask its questions and conversations
    through the chat engine: key facts, right place cited, refusals of what the documents do
    not answer, wrong refusals, follow-ups and latency, split by where the answer sits."""
    import asyncio

    from ragchat import resources
    from ragchat.agents.bootstrap import resolve_config
    from ragchat.agents.factory import build_engine
    from ragchat.eval.answers_io import app_config
    from ragchat.eval.documents import (
        ask_all,
        load_doc_conversations,
        load_questions,
        summarise_replies,
    )
    from ragchat.eval.documents_io import (
        DocumentsRun,
        fresh_kb,
        print_documents,
        write_documents,
    )
    from ragchat.llm.factory import build_chat_model

    with command_scope(data_dir) as settings:
        if not folder.is_dir():
            raise ConfigError(f"{folder} is not a folder")
        if questions is None and conversations is None:
            raise ConfigError("give --questions and/or --conversations")
        qs = load_questions(questions) if questions else []
        qs = qs[:limit] if limit else qs
        convs = load_doc_conversations(conversations) if conversations else []
        embedder = resources.embedder(settings)
        with progress_bars():
            report = fresh_kb(settings, embedder, folder, kb)
        if report.errors:
            raise ConfigError("; ".join(f"{e.source}: {e.reason}" for e in report.errors))
        if kind:
            config, name = app_config(kb, None, None, kind=kind)
        else:
            config = resolve_config(kb, settings)
            name = next(iter(config.agents))
        engine = build_engine(
            settings, config, chat_model=build_chat_model(settings), embedder=embedder
        )
        with progress_bars() as progress:
            replies = asyncio.run(ask_all(engine, qs, convs, agent=name, progress=progress))
        backend = settings.llm.backend if engine.chat_model else "offline (extractive)"
        run = DocumentsRun(kb, name, backend, summarise_replies(replies), replies)
        run.notes.append(f"{kb}: {report.files} files, {report.children} chunks ingested")
        print_documents(run, console)
        paths = write_documents(run, output or settings.data_dir / "eval" / f"documents-{kb}")
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))
