"""``ragchat eval``: retrieval evaluation and gate calibration. Thin like ``ragchat.cli``: parse,
call ``ragchat.eval``, print; the main CLI mounts ``eval_app``.

The commands that generate text (``answers``, ``synth``) are in ``ragchat.eval.cli_generation``
and registered on ``eval_app`` at the end of this module."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragchat.cli_common import DataDir, KbName, command_scope, console, progress_bars
from ragchat.errors import ConfigError
from ragchat.eval.calibrate import calibrate, load_ood, print_calibration, write_calibration
from ragchat.eval.cli_corpus import corpus
from ragchat.eval.cli_documents import documents
from ragchat.eval.cli_generation import answers, conversations, synth
from ragchat.eval.cli_options import (
    ConfigFileOpt,
    LimitOpt,
    OutputOpt,
    QrelsOpt,
    QueriesOpt,
    SectionsOpt,
)
from ragchat.eval.configs import ConfigRegistry, NamedConfig, parse_names
from ragchat.eval.gold import load_inputs
from ragchat.eval.report import print_table, write_reports
from ragchat.eval.retrieval import RetrieverFactory, run_evaluation, select_queries
from ragchat.settings import RetrievalSettings, Settings

eval_app = typer.Typer(no_args_is_help=True, help="Evaluate retrieval and calibrate the gate.")


def retriever_factory(
    settings: Settings, kb: str, *, reranker: bool = True
) -> tuple[RetrieverFactory, bool, str]:
    """Opens the knowledge base once; returns a factory of retrievers over it, whether a
    reranker is available (only tried when ``reranker``) and the reranker status line."""
    from ragchat import resources
    from ragchat.agents.rerankers import configured_reranker, kb_retriever

    base = resources.open_kb(settings, kb)
    model, status = (
        configured_reranker(settings, base.embedder) if reranker else (None, "reranker: not needed")
    )

    def factory(config: RetrievalSettings) -> Any:
        return kb_retriever(settings, base, config)

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
    with command_scope(data_dir) as settings:
        registry = _registry(settings, config_file)
        names = parse_names(configs) or registry.default_names()
        resolved = registry.resolve_many(names, settings.retrieval)
        questions, gold = load_inputs(queries, qrels, sections)
        need = any(c.needs_reranker for c in resolved)
        factory, has_reranker, status = retriever_factory(settings, kb, reranker=need)
        with progress_bars() as progress:
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

    with command_scope(None):
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
    with command_scope(data_dir) as settings:
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
        with progress_bars() as progress:
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


@eval_app.command("example")
def example(
    folder: Annotated[Path, typer.Argument(help="Where to write it (created if missing).")] = Path(
        "ragchat-example"
    ),
) -> None:
    """Write a small evaluation set made from the bundled sample knowledge bases (BEIR corpus,
    queries and qrels, a sections TSV, conversations), to try every command here."""
    from ragchat.cli_common import exit_on_error
    from ragchat.eval.example import write_example

    with exit_on_error():
        files = write_example(folder)
    for kind, path in files.items():
        console.print(f"{kind:>13}: {path}")
    console.print(
        f"next: ragchat ingest {files['corpus']} --kb example && ragchat eval retrieval "
        f"--kb example --queries {files['queries']} --qrels {files['qrels']}",
        soft_wrap=True,
    )


# Defined in ragchat.eval.cli_generation and registered after the retrieval commands, so that
# ``ragchat eval --help`` lists them in this order.
eval_app.command("answers")(answers)
eval_app.command("conversations")(conversations)
eval_app.command("documents")(documents)
eval_app.command("corpus")(corpus)
eval_app.command("synth")(synth)
