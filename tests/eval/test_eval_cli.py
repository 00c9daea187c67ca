import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragchat.eval.cli as eval_cli
from ragchat.settings import RetrievalSettings, Settings
from ragchat.types import Chunk, Hit, RetrievalResult

runner = CliRunner()


class SectionRetriever:
    """Two Markdown chunks per query: the gold section second in bm25 mode, first otherwise."""

    def __init__(self, config: RetrievalSettings) -> None:
        self.config = config

    def retrieve(
        self, query: str, *, top_k: int | None = None, filters: Mapping[str, Any] | None = None
    ) -> RetrievalResult:
        good = Chunk("g", "d", query, 0, metadata={"source": "/kb/a.md", "heading": query})
        other = Chunk("o", "d", "x", 1, metadata={"source": "/kb/a.md", "heading": "Other"})
        hits = [Hit(other, 1.0), Hit(good, 0.5)] if self.config.mode == "bm25" else [Hit(good, 1.0)]
        relevance = 0.1 if query.startswith("Who") else 0.8  # OOD questions look unrelated
        return RetrievalResult(query, hits, relevance=relevance, timings={"total": 1.0})


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    def factory(settings: Settings, kb: str, *, reranker: bool = True) -> tuple[Any, bool, str]:
        return SectionRetriever, False, "no reranker: test"

    monkeypatch.setattr(eval_cli, "retriever_factory", factory)
    (tmp_path / "q.jsonl").write_text(
        '{"_id": "1", "text": "Treatment"}\n{"_id": "2", "text": "Causes"}\n'
    )
    (tmp_path / "s.tsv").write_text(
        "query-id\tfile\tsection\n1\ta.md\tTreatment\n2\ta.md\tCauses\n"
    )
    return tmp_path


def test_retrieval_command_writes_reports(inputs: Path) -> None:
    out = inputs / "out"
    result = runner.invoke(eval_cli.eval_app, [
        "retrieval", "--kb", "demo", "--queries", str(inputs / "q.jsonl"),
        "--sections", str(inputs / "s.tsv"), "--configs", "hybrid,bm25,hybrid+rerank",
        "--output", str(out), "--data-dir", str(inputs),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "skipped hybrid+rerank" in result.output
    summary = json.loads((out / "summary.json").read_text())
    metrics = {s["name"]: s["metrics"] for s in summary["summaries"]}
    assert metrics["hybrid"]["MRR@10"] == 1.0 and metrics["bm25"]["MRR@10"] == 0.5
    assert (out / "report.html").is_file() and (out / "per_query.csv").is_file()


def test_retrieval_command_user_errors_exit_2(inputs: Path) -> None:
    base = ["retrieval", "--kb", "demo", "--queries", str(inputs / "q.jsonl")]
    result = runner.invoke(eval_cli.eval_app, [*base, "--data-dir", str(inputs)])
    assert result.exit_code == 2 and "exactly one of --qrels" in result.output
    result = runner.invoke(eval_cli.eval_app, [
        *base, "--sections", str(inputs / "s.tsv"), "--configs", "hybrid+magic",
        "--data-dir", str(inputs),
    ])  # fmt: skip
    assert result.exit_code == 2 and "unknown modifier" in result.output


def test_calibrate_command(inputs: Path) -> None:
    out = inputs / "cal"
    (inputs / "ood.jsonl").write_text('{"_id": "o1", "text": "Who won?"}\n')
    result = runner.invoke(eval_cli.eval_app, [
        "calibrate", "--kb", "demo", "--queries", str(inputs / "q.jsonl"),
        "--sections", str(inputs / "s.tsv"), "--ood", str(inputs / "ood.jsonl"),
        "--config", "dense", "--output", str(out), "--data-dir", str(inputs),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "recommended gate_threshold = 0.11" in result.output
    assert {p.name for p in out.iterdir()} >= {"calibration.csv", "calibration.png"}


def test_retrieval_with_questions_in_the_sections_file(inputs: Path) -> None:
    """The hand-written form: no --queries; two rows of one question make one query."""
    out = inputs / "out"
    (inputs / "gold.tsv").write_text(
        "question\tfile\tsection\n"
        "Treatment\ta.md\tTreatment\n"
        "Causes\ta.md\tCauses\n"
        "causes\ta.md\tRisk factors\n"
    )
    result = runner.invoke(eval_cli.eval_app, [
        "retrieval", "--kb", "demo", "--sections", str(inputs / "gold.tsv"),
        "--configs", "hybrid,bm25", "--output", str(out), "--data-dir", str(inputs),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    metrics = {s["name"]: s["metrics"] for s in summary["summaries"]}
    # q1 finds its one section; q2 finds one of its two (the fake retriever's heading is the
    # question), so recall@10 is (1 + 1/2) / 2.
    assert metrics["hybrid"]["MRR@10"] == 1.0 and metrics["hybrid"]["R@10"] == 0.75
    rows = (out / "per_query.csv").read_text().splitlines()
    assert {r.split(",")[0] for r in rows[1:]} == {"q1", "q2"}


def test_sections_form_errors_exit_2_naming_the_file(inputs: Path) -> None:
    def error(*args: str) -> str:
        result = runner.invoke(eval_cli.eval_app, ["retrieval", "--kb", "demo", *args])
        assert result.exit_code == 2, result.output
        return " ".join(result.output.split())  # unwrapped

    data = ("--data-dir", str(inputs))
    message = error("--sections", str(inputs / "s.tsv"), *data)
    assert "s.tsv: names query ids" in message and "(--queries)" in message
    (inputs / "bad.tsv").write_text("question\tfile\tsection\nTreatment\ta.md\n")
    message = error("--sections", str(inputs / "bad.tsv"), *data)
    assert "bad.tsv:2: expected 3 tab-separated fields (question, file, section)" in message
    (inputs / "qrels.tsv").write_text("1\tdocA\t1\n")
    assert "--queries is needed with --qrels" in error("--qrels", str(inputs / "qrels.tsv"), *data)
