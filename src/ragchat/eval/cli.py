"""``ragchat eval``: retrieval evaluation and gate calibration. Thin like ``ragchat.cli``: parse,
call ``ragchat.eval``, print; the main CLI mounts ``eval_app``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ragchat.errors import ConfigError
from ragchat.eval.calibrate import calibrate, load_ood, print_calibration, write_calibration
from ragchat.eval.configs import ConfigRegistry, NamedConfig, parse_names
from ragchat.eval.gold import load_inputs
from ragchat.eval.report import print_table, write_reports
from ragchat.eval.retrieval import RetrieverFactory, run_evaluation, select_queries
from ragchat.settings import RetrievalSettings, Settings

eval_app = typer.Typer(no_args_is_help=True, help="Evaluate retrieval and calibrate the gate.")
console = Console()

KbName = Annotated[str, typer.Option("--kb", help="Knowledge base name.")]
QueriesOpt = Annotated[
    Path | None,
    typer.Option(
        "--queries",
        help='BEIR queries.jsonl ({"_id", "text"} a line); not needed when --sections holds '
        "the questions.",
    ),
]
QrelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--qrels",
        help="BEIR qrels TSV (query-id, corpus-id, score) for KBs ingested from a corpus.jsonl.",
    ),
]
SectionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--sections",
        help="TSV of (question, file, section), or (query-id, file, section) with --queries; "
        "section: heading, p<N> page or HH:MM:SS-HH:MM:SS range. One row per gold section.",
    ),
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", help="Output folder (default: <data-dir>/eval/<kb>).")
]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", min=1, help="Only the first N judged queries (file order).")
]
ConfigFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--config-file",
        help="TOML/YAML file with \\[retrieval_configs.NAME] tables "
        "(default: settings.config_file).",
    ),
]
DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", help="Data directory (default: $RAGCHAT_DATA_DIR or ./ragchat-data)."
    ),
]


@contextmanager
def _cli(data_dir: Path | None) -> Iterator[Settings]:
    """Settings and the error → exit code mapping of the main CLI (imported lazily:
    ``ragchat.cli`` imports this module to mount it)."""
    from ragchat.cli import _errors, _settings

    settings = _settings(data_dir)
    with _errors():
        yield settings


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    from ragchat.cli import _progress as progress_bars

    with progress_bars() as progress:
        yield progress


def retriever_factory(
    settings: Settings, kb: str, *, reranker: bool = True
) -> tuple[RetrieverFactory, bool, str]:
    """Opens the knowledge base once; returns a factory of retrievers over it, whether a
    reranker is available (only tried when ``reranker``) and the reranker status line."""
    from ragchat import services
    from ragchat.retrieve.factory import build_retriever, shared_reranker

    base = services.open_kb(settings, kb)
    model, status = shared_reranker(settings) if reranker else (None, "reranker: not needed")

    def factory(config: RetrievalSettings) -> Any:
        return build_retriever(settings, base, config)

    return factory, model is not None, status


def _registry(settings: Settings, config_file: Path | None) -> ConfigRegistry:
    return ConfigRegistry.from_file(config_file or settings.config_file)


@eval_app.command("retrieval")
def retrieval(
    kb: KbName,
    queries: QueriesOpt = None,
    qrels: QrelsOpt = None,
    sections: SectionsOpt = None,
    configs: Annotated[
        str,
        typer.Option(
            "--configs",
            help="Comma-separated configurations, "
            "e.g. bm25,hybrid+rerank (default: the standard list and your own).",
        ),
    ] = "",
    output: OutputOpt = None,
    limit: LimitOpt = None,
    config_file: ConfigFileOpt = None,
    data_dir: DataDir = None,
) -> None:
    """Measure MRR, recall, nDCG, NO_ANSWER rate and latency of named retrieval configurations."""
    with _cli(data_dir) as settings:
        registry = _registry(settings, config_file)
        names = parse_names(configs) or registry.default_names()
        resolved = registry.resolve_many(names, settings.retrieval)
        questions, gold = load_inputs(queries, qrels, sections)
        need = any(c.needs_reranker for c in resolved)
        factory, has_reranker, status = retriever_factory(settings, kb, reranker=need)
        with _progress() as progress:
            run = run_evaluation(
                resolved,
                factory,
                questions,
                gold,
                kb=kb,
                limit=limit,
                reranker_available=has_reranker,
                progress=progress,
            )
        run.notes.append(status)
        print_table(run, console)
        paths = write_reports(run, output or settings.data_dir / "eval" / kb)
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))


@eval_app.command("compare")
def compare_configs(
    per_query: Annotated[
        Path, typer.Argument(help="per_query.csv written by `ragchat eval retrieval`.")
    ],
    baseline: Annotated[str, typer.Option("--baseline", help="Configuration to compare to.")],
    configs: Annotated[
        str, typer.Option("--configs", help="Comma-separated (default: every other one).")
    ] = "",
    metric: Annotated[str, typer.Option("--metric", help="per_query.csv column.")] = "ndcg@10",
    resamples: Annotated[int, typer.Option("--resamples", min=100)] = 2000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Paired bootstrap over queries: each configuration's difference to the baseline with a
    95% interval, and how many queries got better or worse."""
    from rich.table import Table

    from ragchat.eval.significance import compare, load_per_query

    with _cli(None):
        scores = load_per_query(per_query, metric)
        rows = compare(scores, baseline, parse_names(configs), resamples=resamples, seed=seed)
        table = Table(title=f"{metric}: difference to {baseline} ({resamples} resamples)")
        for column in ("configuration", metric, "difference", "95% interval", "better", "worse"):
            table.add_column(column, justify="left" if column == "configuration" else "right")
        for r in rows:
            mark = " *" if r.significant else ""
            table.add_row(
                r.config,
                f"{r.mean:.4f}",
                f"{r.diff:+.4f}{mark}",
                f"{r.low:+.4f} … {r.high:+.4f}",
                str(r.better),
                str(r.worse),
            )
        console.print(table)
        console.print("* the interval excludes 0")


@eval_app.command("calibrate")
def calibrate_gate(
    kb: KbName,
    queries: QueriesOpt = None,
    qrels: QrelsOpt = None,
    sections: SectionsOpt = None,
    ood: Annotated[
        Path | None,
        typer.Option(
            "--ood",
            help="Out-of-domain queries.jsonl (default: the packaged general-knowledge set).",
        ),
    ] = None,
    config: Annotated[
        str,
        typer.Option(
            "--config",
            help="Named configuration to calibrate (default: the configured retrieval settings).",
        ),
    ] = "",
    output: OutputOpt = None,
    limit: LimitOpt = None,
    config_file: ConfigFileOpt = None,
    data_dir: DataDir = None,
) -> None:
    """Recommend the gate threshold that best separates in-domain from off-topic questions."""
    with _cli(data_dir) as settings:
        named = (
            _registry(settings, config_file).resolve(config, settings.retrieval)
            if config
            else NamedConfig("settings", settings.retrieval)
        )
        questions, gold = load_inputs(queries, qrels, sections)
        selected, _ = select_queries(questions, gold.qrels, limit)
        if not selected:
            raise ConfigError(f"no query in {queries or sections} has a relevant judgement")
        factory, _, status = retriever_factory(settings, kb, reranker=named.needs_reranker)
        ood_queries = load_ood(ood)
        with _progress() as progress:
            cal = calibrate(
                factory(named.settings),
                selected,
                gold,
                ood_queries,
                config=named.name,
                progress=progress,
            )
        print_calibration(cal, console)
        console.print(f"[dim]{status}[/]")
        paths = write_calibration(cal, output or settings.data_dir / "eval" / kb)
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))


@eval_app.command("answers")
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

    from ragchat import services
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

    with _cli(data_dir) as settings:
        kind = fmt or ("jsonl" if data.suffix == ".jsonl" else "pubmedqa")
        if kind not in ("pubmedqa", "jsonl"):
            raise ConfigError(f"--format must be pubmedqa or jsonl, not {kind!r}")
        embedder = services.embedder(settings)
        notes: list[str] = []
        if kind == "pubmedqa":
            kb = kb or "pubmedqa"
            items, corpus = load_pubmedqa(data)
            with _progress():
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
            return engine.deps.knowledge_base(other or kb_name).get_chunks(ids)

        with _progress() as progress:
            records = asyncio.run(
                evaluate_answers(
                    engine, items, agent=name, chunks=chunks, embedder=embedder, progress=progress
                )
            )
        backend = settings.llm.backend if engine.deps.chat_model else "offline (extractive)"
        run = AnswerRun(kb_name, name, backend, len(records), summarise(records), records, notes)
        print_answers(run, console)
        paths = write_answers(run, output or settings.data_dir / "eval" / f"answers-{kb_name}")
        console.print("wrote " + ", ".join(str(p) for p in paths.values()))


@eval_app.command("synth")
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

    from ragchat import services
    from ragchat.eval.synth import TOP_K, synthesize, write_synth
    from ragchat.llm.factory import build_chat_model
    from ragchat.retrieve.factory import build_retriever

    with _cli(data_dir) as settings:
        embedder = services.embedder(settings)
        base = services.open_kb(settings, kb, embedder)
        retriever = build_retriever(settings, base)
        model = build_chat_model(settings)

        def retrieve(question: str) -> list[str]:
            result = retriever.retrieve(question, top_k=TOP_K, filters=None)
            return [h.chunk.chunk_id for h in result.hits]

        with _progress() as progress:
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
