"""``ragchat eval answers``, ``ragchat eval conversations`` and ``ragchat eval synth``: the
evaluation commands that run the chat stack to generate text (agent replies to score,
conversations played turn by turn, synthetic questions to judge retrieval with) rather than
only retrieve.

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


def conversations(
    data: Annotated[
        Path, typer.Option("--data", help="JSONL of conversations (turns, gold_doc, topic).")
    ],
    kb: Annotated[
        str | None,
        typer.Option("--kb", help="Knowledge base (default: the agent's, with --config-file)."),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="Agent to talk to (default: one agent of --kind)."),
    ] = None,
    kind: Annotated[
        str,
        typer.Option("--kind", help="Agent kind when no --config-file names the agent."),
    ] = "conversational_rag",
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N conversations.")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", help="Output folder (default: <data-dir>/eval/conversations-<kb>)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON instead of tables.")
    ] = False,
    config_file: Annotated[
        Path | None,
        typer.Option("--config-file", help="Agents config (TOML/YAML) holding --agent."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Play multi-turn conversations through the chat engine and score each turn: retrieval
    after the agent's own reformulation against the raw message and the message with the
    topic written in (nDCG@10, MRR, recall), and the answer metrics of `eval answers`."""
    import asyncio
    import json

    from ragchat import resources
    from ragchat.agents.factory import build_engine
    from ragchat.eval.answers_io import app_config
    from ragchat.eval.conversations import (
        ConversationRun,
        evaluate_conversations,
        load_conversations,
        summarise_turns,
    )
    from ragchat.eval.conversations_io import print_conversations, write_conversations
    from ragchat.llm.factory import build_chat_model

    with command_scope(data_dir) as settings:
        convs = load_conversations(data)
        convs = convs[:limit] if limit else convs
        if kb is None and config_file is None:
            raise ConfigError("--kb is needed without --config-file")
        embedder = resources.embedder(settings)
        config, name = app_config(kb or "", agent, config_file, kind=kind)
        engine = build_engine(
            settings, config, chat_model=build_chat_model(settings), embedder=embedder
        )
        agent_config = config.agents[name]
        kb_name = kb or agent_config.knowledge_base or ""
        if not kb_name:
            raise ConfigError(f"agent {name!r} has no knowledge base: give --kb")
        knowledge = engine.wiring.knowledge

        def retriever(other: str | None) -> Any:
            return knowledge.retriever(agent_config, other or kb)

        def chunks(other: str | None, ids: Any) -> Any:
            return knowledge.knowledge_base(other or kb_name).get_chunks(ids)

        with progress_bars() as progress:
            records = asyncio.run(
                evaluate_conversations(
                    engine,
                    convs,
                    agent=name,
                    retriever=retriever,
                    chunks=chunks,
                    embedder=embedder,
                    progress=progress,
                )
            )
        backend = settings.llm.backend if engine.chat_model else "offline (extractive)"
        summary = summarise_turns(records)
        run = ConversationRun(kb_name, name, backend, len(convs), summary, records)
        if not any(r.metrics for r in records):
            run.notes.append("no turn has a gold_doc or gold_section: no retrieval metrics")
        paths = write_conversations(
            run, output or settings.data_dir / "eval" / f"conversations-{kb_name}"
        )
        if as_json:
            console.print_json(json.dumps(run.to_json()))
        else:
            print_conversations(run, console)
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
    from ragchat.agents.rerankers import kb_retriever
    from ragchat.eval.synth import TOP_K, synthesize, write_synth
    from ragchat.llm.factory import build_chat_model

    with command_scope(data_dir) as settings:
        embedder = resources.embedder(settings)
        base = resources.open_kb(settings, kb, embedder)
        retriever = kb_retriever(settings, base)
        model = build_chat_model(settings)

        def retrieve(question: str) -> list[str]:
            result = retriever.retrieve(question, top_k=TOP_K, filters=None)
            return [h.chunk.chunk_id for h in result.hits]

        with progress_bars() as progress:
            questions, report = asyncio.run(
                synthesize(
                    base.children(),
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
