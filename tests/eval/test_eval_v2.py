"""Second-generation named configurations and the 80-column terminal table."""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from ragchat.eval.configs import DEFAULT_CONFIGS, ConfigRegistry
from ragchat.eval.metrics import METRIC_NAMES
from ragchat.eval.report import print_table
from ragchat.eval.retrieval import ConfigSummary, EvalRun
from ragchat.settings import RetrievalSettings

DEFAULTS = RetrievalSettings(
    complete_scores=True, title_weight=0.3, prf_docs=5, rerank=True, parents=True
)


def test_bases_switch_the_new_steps_off() -> None:
    reg = ConfigRegistry()
    for name in ("bm25", "dense", "hybrid", "hybrid_rrf", "dense_first", "hybrid_z"):
        s = reg.resolve(name, DEFAULTS).settings
        assert (s.complete_scores, s.title_weight, s.prf_docs) == (False, 0.0, 0), name


def test_hybrid_v2_and_modifiers() -> None:
    reg = ConfigRegistry()
    v2 = reg.resolve("hybrid_v2", DEFAULTS).settings
    assert (v2.mode, v2.fusion, v2.alpha) == ("hybrid", "zscore", 0.5)
    assert (v2.complete_scores, v2.title_weight, v2.prf_docs) == (False, 0.2, 0)
    assert not (v2.rerank or v2.parents)
    z = reg.resolve("hybrid_z+fill+title+prf", DEFAULTS).settings
    assert (z.fusion, z.complete_scores, z.title_weight) == ("zscore", True, 0.2)
    assert (z.prf_docs, z.prf_weight) == (3, 0.5)
    assert {"hybrid_v2", "hybrid_v2+prf", "hybrid+title", "hybrid+fill"} <= set(DEFAULT_CONFIGS)


def test_user_tables_accept_the_new_fields(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        '[retrieval_configs.mine]\nbase = "hybrid_z"\nfill = true\ntitle = 0.2\nprf_docs = 2\n',
        encoding="utf-8",
    )
    s = ConfigRegistry.from_file(path).resolve("mine", DEFAULTS).settings
    assert (s.fusion, s.complete_scores, s.title_weight, s.prf_docs) == ("zscore", True, 0.2, 2)


def summary(name: str, value: float) -> ConfigSummary:
    return ConfigSummary(
        name=name,
        settings={},
        queries=505,
        metrics={m: value for m in METRIC_NAMES},
        no_answer_rate=0.002,
        wrong_refusal_rate=0.0,
        latency={"total": {"p50": 61.4, "p95": 1234.5, "max": 2000.0}},
    )


def test_terminal_table_is_readable_at_80_columns() -> None:
    run = EvalRun(
        kb="scifact",
        gold="corpus",
        depth=100,
        queries=505,
        skipped_no_qrels=0,
        qrels_without_query=0,
        summaries=[summary("hybrid_v2+prf+rerank+nb+parents", 0.8951), summary("bm25", 0.8575)],
        records=[],
    )
    console = Console(width=80, record=True, force_terminal=False)
    print_table(run, console)
    text = console.export_text()
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    for header in ("nDCG", "MRR", "R@1", "R@10", "R@100", "NoAns", "p50", "p95"):
        assert re.search(rf"\b{re.escape(header)}\b", text), header
    assert "0.895" in text and "0.858" in text and "1234" in text and "0.002" in text
