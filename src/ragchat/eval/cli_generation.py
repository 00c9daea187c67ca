"""``ragchat eval answers`` and ``ragchat eval synth``: the evaluation commands that run the
chat stack to generate text (agent replies to score, synthetic questions to judge retrieval
with) rather than only retrieve.

``ragchat.eval.cli`` registers these functions on ``eval_app``; the agents, models and the
``ragchat.eval`` modules they need are imported inside them so CLI start-up stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragchat.cli_common import DataDir, KbName, command_scope, console, progress_bars
from ragchat.errors import ConfigError
from ragchat.eval.cli_options import LimitOpt


def answers(
    data: Annotated[
        Path, typer.Option("--data", help="PubMedQA PQA-L JSON, or JSONL of question/answer.")
    ],
    fmt: Annotated[
        str, typer.Option("--format", help="pubmedqa or jsonl (default: from the file suffix).")
    ] = "",
    kb: Annotated[
        str | None,
        typer.Option("--kb", help="Knowledge base (PubMedQA: built from the contexts)."),
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent to ask (default: one rag agent).")
    ] = None,
    limit: LimitOpt = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Output folder (default: <data-dir>/eval/answers-<kb>)."),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("--config-file", help="Agents config (TOML/YAML) holding --agent."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Answer questions with the configured backend (offline extractive by default) and score
    the replies: ROUGE-L, similarity, citations, groundedness, NO_ANSWER rate, latency."""
    import asyncio

    from ragchat import resources
    from ragchat.agents.factory import build_engine
    from ragchat.eval.answers import (
        AnswerRun,
        evaluate_answers,
        load_answer_jsonl,
        load_pubmedqa,
        summarise,
    )
    from ragchat.eval.answers_io import app_config, ensure_corpus_kb, print_answers, write_answers
    from ragchat.llm.factory import build_chat_model

    with command_scope(data_dir) as settings:
        kind = fmt or ("jsonl" if data.suffix == ".jsonl" else "pubmedqa")
        if kind not in ("pubmedqa", "jsonl"):
            raise ConfigError(f"--format must be pubmedqa or jsonl, not {kind!r}")
        embedder = resources.embedder(settings)
        notes: list[str] = []
        if kind == "pubmedqa":
            kb = kb or "pubmedqa"
            items, corpus = load_pubmedqa(data)
            with progress_bars():
                report = ensure_corpus_kb(settings, embedder, corpus, kb)
            notes.append(f"{kb}: {len(corpus)} passages, {report.added_files} files ingested now")
        else:
            items = load_answer_jsonl(data)
            if kb is None:
                raise ConfigError("--kb is needed with --format jsonl")
        items = items[:limit] if limit else items
        config, name = app_config(kb, agent, config_file)
        engine = build_engine(
            settings, config, chat_model=build_chat_model(settings), embedder=embedder
        )
        kb_name = config.agents[name].knowledge_base or kb

        def chunks(other: str | None, ids: Any) -> Any:
            return engine.wiring.knowledge.knowledge_base(other or kb_name).get_chunks(ids)

        with progress_bars() as progress:
            records = asyncio.run(
                evaluate_answers(
                    engine, items, agent=name, chunks=chunks, embedder=embedder, progress=progress
                )
            )
        backend = settings.llm.backend if engine.chat_model else "offline (extractive)"
        run = AnswerRun(kb_name, name, backend, len(records), summarise(records), records, notes)
        print_answers(run, console)
        paths = write_answers(run, output or settings.data_dir / "eval" / f"answers-{kb_name}")
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))


def synth(
    kb: KbName,
    n: Annotated[int, typer.Option("-n", "--n", min=1, help="Questions to keep.")] = 200,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Output folder (default: <data-dir>/eval/synth-<kb>)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    data_dir: DataDir = None,
) -> None:
    """Write a question set (queries.jsonl + chunk-level qrels.tsv) for a knowledge base:
    questions by the configured LLM, or templated offline, filtered for duplicates and for
    questions whose source chunk the default retriever does not find in its top 10."""
    import asyncio

    from ragchat import resources
    from ragchat.eval.synth import TOP_K, synthesize, write_synth
    from ragchat.llm.factory import build_chat_model
    from ragchat.retrieve.factory import build_retriever

    with command_scope(data_dir) as settings:
        embedder = resources.embedder(settings)
        base = resources.open_kb(settings, kb, embedder)
        retriever = build_retriever(settings, base)
        model = build_chat_model(settings)

        def retrieve(question: str) -> list[str]:
            result = retriever.retrieve(question, top_k=TOP_K, filters=None)
            return [h.chunk.chunk_id for h in result.hits]

        with progress_bars() as progress:
            questions, report = asyncio.run(
                synthesize(
                    list(base.store.iter_children()),
                    n=n,
                    seed=seed,
                    embedder=embedder,
                    retrieve=retrieve,
                    model=model,
                    progress=progress,
                )
            )
        dropped = ", ".join(f"{k} {v}" for k, v in report.dropped.items())
        console.print(
            f"kept {report.kept}/{n} questions from {report.tried} of {report.candidates} "
            f"chunks ({'LLM' if model else 'offline templates'}); dropped: {dropped}"
        )
        if report.kept < n:
            console.print(f"[yellow]only {report.kept} questions passed the filters[/]")
        paths = write_synth(questions, report, output or settings.data_dir / "eval" / f"synth-{kb}")
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))
