"""Paired bootstrap: a real improvement is significant, noise and ties are not; the command
reads the harness's per_query.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragchat.cli import app
from ragchat.eval.data import EvalDataError
from ragchat.eval.significance import compare, load_per_query, paired_bootstrap

rng = np.random.default_rng(7)
BASE = rng.uniform(0.2, 0.9, size=200)


def _scores(**configs: np.ndarray) -> dict[str, dict[str, float]]:
    return {name: {f"q{i}": float(v) for i, v in enumerate(vals)} for name, vals in configs.items()}


def test_an_improvement_on_most_queries_is_significant() -> None:
    better = np.clip(BASE + rng.normal(0.05, 0.05, size=BASE.size), 0, 1)
    noise = BASE + rng.permutation(np.repeat([0.05, -0.05], BASE.size // 2))  # mean change 0
    rows = {
        r.config: r
        for r in compare(_scores(base=BASE, better=better, noise=noise, same=BASE), "base")
    }
    assert rows["better"].significant and rows["better"].low > 0 and rows["better"].diff > 0.03
    assert rows["better"].better > rows["better"].worse
    assert not rows["noise"].significant and rows["noise"].low < 0 < rows["noise"].high
    same = rows["same"]
    assert (same.diff, same.low, same.high, same.better, same.worse) == (0, 0, 0, 0, 0)
    assert not same.significant and same.queries == BASE.size


def test_only_shared_queries_are_paired_and_the_seed_fixes_the_interval() -> None:
    scores = _scores(base=BASE, other=BASE + 0.1)
    del scores["other"]["q0"]
    assert compare(scores, "base")[0].queries == BASE.size - 1
    other = BASE + rng.normal(0, 0.1, BASE.size)
    first = paired_bootstrap(BASE, other, seed=3)
    assert paired_bootstrap(BASE, other, seed=3) == first
    assert paired_bootstrap(BASE, other, seed=4) != first


def _write(path: Path, scores: dict[str, dict[str, float]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["query_id", "config", "ndcg@10", "rr@10"])
        for config, per in scores.items():
            for qid, value in per.items():
                writer.writerow([qid, config, value, value])
    return path


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "per_query.csv", _scores(base=BASE, other=BASE))
    with pytest.raises(EvalDataError, match="no column 'recall@5'"):
        load_per_query(path, "recall@5")
    with pytest.raises(EvalDataError, match="baseline 'hybrid' not in the results"):
        compare(load_per_query(path, "ndcg@10"), "hybrid")
    with pytest.raises(EvalDataError, match="not in the results: nope"):
        compare(load_per_query(path, "ndcg@10"), "base", ["nope"])


def test_the_command_prints_the_comparison(tmp_path: Path) -> None:
    better = np.clip(BASE + 0.1, 0, 1)
    path = _write(tmp_path / "per_query.csv", _scores(hybrid=BASE, hybrid_v2=better))
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "compare", str(path), "--baseline", "hybrid"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "hybrid_v2" in x)
    assert "+0.1000 *" in line  # a significant gain
    missing = runner.invoke(app, ["eval", "compare", str(path), "--baseline", "bm25"])
    assert missing.exit_code != 0 and "baseline 'bm25' not in the results" in missing.output
