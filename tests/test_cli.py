"""The CLI as a user runs it: the real packaged embedding model on the sample knowledge base."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragchat.cli import app
from ragchat.resources import SAMPLE_KB_DIR

runner = CliRunner()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-data")
    result = runner.invoke(
        app, ["ingest", str(SAMPLE_KB_DIR / "medical"), "--kb", "medical", "--data-dir", str(root)]
    )
    assert result.exit_code == 0, result.output
    assert "9 new" in result.output and "pages" in result.output
    return root


def test_reingest_is_a_no_op(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_model(*_: object) -> None:
        raise AssertionError("a no-op ingest must not load the embedding model")

    monkeypatch.setattr("ragchat.resources.embedder", no_model)
    result = runner.invoke(
        app,
        ["ingest", str(SAMPLE_KB_DIR / "medical"), "--kb", "medical", "--data-dir", str(data_dir)],
    )
    assert result.exit_code == 0, result.output
    assert "9 unchanged" in result.output and "0 added" in result.output


def test_search_prints_cited_passages(data_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "search",
            "maximum daily dose of acetaminophen",
            "--kb",
            "medical",
            "--data-dir",
            str(data_dir),
            "--top-k",
            "3",
        ],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert "acetaminophen.md" in result.output
    assert "Usual adult dosing" in result.output


def test_search_json_and_pdf_pages(data_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "search",
            "how to dispose of unused medicines",
            "--kb",
            "medical",
            "--json",
            "--mode",
            "bm25",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["mode"] == "bm25"
    top = payload["hits"][0]
    assert top["source"].endswith("medicine-safety-leaflet.pdf")
    assert top["location"] == "page 3"


def test_out_of_scope_question_says_no_answer(data_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "search",
            "Who won the 2014 football World Cup?",
            "--kb",
            "medical",
            "--json",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert json.loads(result.output)["no_answer"] is True


def test_kb_list_stats_and_errors(data_dir: Path) -> None:
    listed = runner.invoke(app, ["kb", "list", "--data-dir", str(data_dir)], terminal_width=200)
    assert listed.exit_code == 0 and "medical" in listed.output
    stats = runner.invoke(app, ["kb", "stats", "medical", "--data-dir", str(data_dir)])
    assert stats.exit_code == 0 and "all-MiniLM-L6-v2" in stats.output
    missing = runner.invoke(app, ["search", "x y z", "--kb", "nope", "--data-dir", str(data_dir)])
    assert missing.exit_code == 3 and "no knowledge base named 'nope'" in missing.output
    bad_path = runner.invoke(
        app, ["ingest", str(data_dir / "absent"), "--kb", "medical", "--data-dir", str(data_dir)]
    )
    assert bad_path.exit_code == 4
    bad_mode = runner.invoke(
        app, ["search", "dose", "--kb", "medical", "--mode", "magic", "--data-dir", str(data_dir)]
    )
    assert bad_mode.exit_code == 7


def test_kb_remove_and_delete(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\nAlpha particles are helium nuclei.\n")
    (folder / "b.txt").write_text("Beta decay emits an electron.\n")
    data = tmp_path / "data"
    assert (
        runner.invoke(
            app, ["ingest", str(folder), "--kb", "phys", "--data-dir", str(data)]
        ).exit_code
        == 0
    )
    removed = runner.invoke(
        app, ["kb", "remove", "phys", str(folder / "a.md"), "--data-dir", str(data)]
    )
    assert removed.exit_code == 0 and "removed 1" in removed.output
    deleted = runner.invoke(app, ["kb", "delete", "phys", "--yes", "--data-dir", str(data)])
    assert deleted.exit_code == 0
    assert not (data / "kb" / "phys").exists()
