"""``ragchat eval example``: the README's "Measure" commands run on a fresh clone, from a set
made of the bundled sample knowledge bases (no ``../shared`` data)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from ragchat.cli import app
from ragchat.eval.example import QUESTIONS, sections, write_example
from ragchat.eval.gold import load_inputs

README = Path(__file__).resolve().parents[2] / "README.md"
runner = CliRunner()


def test_the_set_is_consistent_beir(tmp_path: Path) -> None:
    files = write_example(tmp_path / "set")
    corpus = [json.loads(line) for line in files["corpus"].read_text().splitlines()]
    ids = {r["_id"] for r in corpus}
    assert len(ids) == len(corpus) == len(sections()) and all(r["text"] for r in corpus)
    with files["qrels"].open() as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert {r["corpus-id"] for r in rows} <= ids and len(rows) == len(QUESTIONS)
    questions, gold = load_inputs(files["queries"], files["qrels"], None)
    assert len(questions) == len(QUESTIONS) and len(gold.qrels) == len(QUESTIONS)
    questions, gold = load_inputs(None, None, files["sections"])
    assert questions and len(gold.qrels) == len(questions)
    for line in files["conversations"].read_text().splitlines():
        turns = json.loads(line)["turns"]
        assert len(turns) >= 2 and {t["gold_doc"] for t in turns} <= ids


def test_the_command_writes_it_and_says_what_next(tmp_path: Path) -> None:
    result = runner.invoke(app, ["eval", "example", str(tmp_path / "ex")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ex" / "corpus.jsonl").is_file() and "ragchat ingest" in result.output


def test_the_readme_needs_no_data_a_clone_does_not_have() -> None:
    text = README.read_text(encoding="utf-8")
    assert "../shared" not in text
    measure = text[text.index("### Measure") : text.index("## Configure")]
    assert "ragchat eval example" in measure
    for path in re.findall(r"ragchat-example/[\w.]+", measure):
        assert Path(path).name in {
            "corpus.jsonl",
            "queries.jsonl",
            "qrels.tsv",
            "sections.tsv",
            "conversations.jsonl",
        }, path
