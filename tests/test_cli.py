"""The CLI as a user runs it: the real packaged embedding model on the sample knowledge base."""

import json
import os
import subprocess
import sys
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


def test_kb_migrate_to_qdrant_then_search_there(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("qdrant_client")
    bad = runner.invoke(
        app, ["kb", "migrate", "medical", "--to", "mongo", "--data-dir", str(data_dir)]
    )
    assert bad.exit_code == 2 and "--to must be one of embedded, qdrant, pgvector" in bad.output
    moved = runner.invoke(
        app,
        [
            "kb",
            "migrate",
            "medical",
            "--to",
            "qdrant",
            "--name",
            "med-q",
            "--data-dir",
            str(data_dir),
        ],
    )
    assert moved.exit_code == 0, moved.output
    assert "embedded:medical → qdrant:med-q" in moved.output and "9" in moved.output
    question = ["search", "maximum daily dose of acetaminophen", "--json", "--top-k", "3"]
    embedded = runner.invoke(app, [*question, "--kb", "medical", "--data-dir", str(data_dir)])
    monkeypatch.setenv("RAGCHAT_VECTOR_STORE__BACKEND", "qdrant")
    listed = runner.invoke(app, ["kb", "list", "--data-dir", str(data_dir)], terminal_width=200)
    assert listed.exit_code == 0 and "med-q" in listed.output and "(qdrant)" in listed.output
    on_qdrant = runner.invoke(app, [*question, "--kb", "med-q", "--data-dir", str(data_dir)])
    assert on_qdrant.exit_code == 0, on_qdrant.output

    def ids(output: str) -> list[str]:
        return [h["chunk_id"] for h in json.loads(output)["hits"]]

    assert ids(on_qdrant.output) == ids(embedded.output)


def test_a_failed_first_ingest_leaves_no_empty_knowledge_base(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"not a pdf at all")
    data = tmp_path / "data"
    result = runner.invoke(app, ["ingest", str(broken), "--kb", "ghost", "--data-dir", str(data)])
    assert result.exit_code == 4, result.output
    assert not (data / "kb" / "ghost").exists()
    listed = runner.invoke(app, ["kb", "list", "--data-dir", str(data)], terminal_width=200)
    assert "ghost" not in listed.output


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in its own process: what a terminal shows, log lines included (in-process
    runs share one logging set-up, whose stream is not the runner's)."""
    code = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400"},
    )


def test_a_failed_file_is_reported_once(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"not a pdf at all")
    result = run_cli("ingest", str(broken), "--kb", "once", "--data-dir", str(tmp_path / "data"))
    output = result.stdout + result.stderr
    assert result.returncode == 4 and output.count("%%EOF") == 1, output  # no log line too


def test_the_missing_cross_encoder_is_said_plainly_by_health_and_kb_stats_only(
    data_dir: Path,
) -> None:
    searched = run_cli("search", "dose", "--kb", "medical", "--data-dir", str(data_dir))
    assert searched.returncode == 0, searched.stderr
    assert "reranker" not in searched.stdout + searched.stderr
    for command in (["health"], ["kb", "stats", "medical"]):
        result = run_cli(*command, "--data-dir", str(data_dir))
        assert result.returncode == 0, result.stderr
        output = result.stdout + result.stderr
        assert "OSError" not in output and "huggingface.co" not in output
        text = " ".join(output.replace("│", " ").split())  # table cells unwrapped
        assert text.count("reranker") == 1, output
        assert "not reranked" in text or "ms-marco" in text  # off and why, or on
    health = run_cli("health", "--data-dir", str(data_dir))
    assert "all-MiniLM-L6-v2" in health.stdout and "kb medical" in health.stdout


def test_kb_check_says_what_is_wrong_and_kb_repair_fixes_it(tmp_path: Path) -> None:
    from ragchat.embed.fake import HashingEmbedder
    from ragchat.types import Chunk
    from ragchat.vectorstores.embedded import generations
    from ragchat.vectorstores.embedded.kb import KnowledgeBase

    kb = KnowledgeBase.create(tmp_path / "kb", "notes", HashingEmbedder())
    kb.add_chunks([Chunk("n_c0", "n", "quokkas eat leaves", 0, None, False, {})])
    kb.close()
    data = ["--data-dir", str(tmp_path)]
    assert runner.invoke(app, ["kb", "check", *data]).exit_code == 0
    gen = generations.current(tmp_path / "kb" / "notes")
    assert gen is not None
    (gen.dir / "bm25_tf.npz").unlink()
    checked = runner.invoke(app, ["kb", "check", "notes", *data], terminal_width=200)
    assert checked.exit_code == 6, checked.output
    assert "broken notes" in checked.output and "BM25" in checked.output
    assert "ragchat kb repair notes" in checked.output
    repaired = runner.invoke(app, ["kb", "repair", "notes", *data], terminal_width=200)
    assert repaired.exit_code == 0, repaired.output
    assert "rebuilt" in repaired.output and "ok notes opens" in repaired.output
    again = runner.invoke(app, ["kb", "check", *data], terminal_width=200)
    assert again.exit_code == 0 and "ok notes" in again.output
    fixed = KnowledgeBase.open(tmp_path / "kb", "notes", HashingEmbedder())
    assert [h[0] for h in fixed.bm25_search("quokkas", 3)] == ["n_c0"]


def test_kb_share_and_unshare_a_users_knowledge_base(data_dir: Path) -> None:
    """An operator shares (and unshares) a knowledge base a user created over the API; the
    listing says who sees what."""
    from ragchat.settings import Settings
    from ragchat.store import build_store

    store = build_store(Settings(data_dir=data_dir), recover=False)
    try:
        user = store.ensure_user(kind="named").id
        store.create_kb("recipes", user, description="Family recipes")
    finally:
        store.close()
    args = ["--data-dir", str(data_dir)]
    assert runner.invoke(app, ["kb", "share", "recipes", *args]).exit_code == 0
    store = build_store(Settings(data_dir=data_dir), recover=False)
    try:
        row = store.find_kb("recipes")
        assert row is not None and row.shared
    finally:
        store.close()
    unshared = runner.invoke(app, ["kb", "unshare", "recipes", *args])
    assert unshared.exit_code == 0 and "only its owner" in unshared.output
    listing = runner.invoke(app, ["kb", "list", *args], env={"COLUMNS": "200"})
    assert listing.exit_code == 0 and "everyone" in listing.output  # medical, from the CLI
    samples = runner.invoke(app, ["kb", "share", "medical", *args])
    assert samples.exit_code != 0 and "already shared" in samples.output
    deleted = runner.invoke(app, ["kb", "delete", "recipes", "--yes", *args])
    assert deleted.exit_code == 0
    store = build_store(Settings(data_dir=data_dir), recover=False)
    try:
        assert store.find_kb("recipes") is None
    finally:
        store.close()


def test_ingest_names_unsupported_files_and_fails_when_nothing_is_ingested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(*_: object) -> None:
        raise AssertionError("nothing to ingest: no model should load")

    monkeypatch.setattr("ragchat.resources.ingest_embedder", no_model)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.odt").write_bytes(b"x")
    (folder / "slides.key").write_bytes(b"x")
    result = runner.invoke(
        app,
        ["ingest", str(folder), "--kb", "junk", "--data-dir", str(tmp_path / "data")],
        terminal_width=400,
    )
    assert result.exit_code == 4, result.output
    out = " ".join(result.output.split())
    assert "skipped" in out and "notes.odt" in out and "unsupported file type '.odt'" in out
    assert "slides.key" in out and "nothing to ingest" in out and "Word (.docx)" in out
    assert not (tmp_path / "data" / "kb" / "junk").exists()


def test_a_port_in_use_is_said_before_any_start_up_work(tmp_path: Path) -> None:
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        result = runner.invoke(
            app, ["serve", "--port", str(port), "--data-dir", str(tmp_path / "data")]
        )
    finally:
        taken.close()
    assert result.exit_code == 9, result.output
    said = " ".join(result.output.split())
    assert f"port {port} on 127.0.0.1 is in use" in said
    assert f"--port {port + 1}" in said and f"RAGCHAT_API__PORT={port + 1}" in said
    # Nothing was started: no database, no knowledge base ingested.
    assert not list((tmp_path / "data").glob("kb/*")) and not list(
        (tmp_path / "data").glob("*.sqlite3")
    )


def test_chat_with_one_knowledge_base(data_dir: Path) -> None:
    """``ragchat chat --kb NAME``: the knowledge-base agent the server binds a user's knowledge
    base to, over that one, with a follow-up."""
    result = runner.invoke(
        app,
        ["chat", "--kb", "medical", "--data-dir", str(data_dir)],
        input="What are the side effects of ibuprofen?\nCan I take it with warfarin?\n",
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert out.count("documents ›") == 2 and "[1]" in out
    assert "Ibuprofen" in out and "bleeding" in out.lower()


def test_chat_with_a_missing_knowledge_base_names_the_data_directory(data_dir: Path) -> None:
    result = runner.invoke(
        app, ["chat", "--kb", "sailing", "--data-dir", str(data_dir)], terminal_width=300
    )
    assert result.exit_code == 3, result.output
    assert str(data_dir.resolve()) in result.output
    assert "holds: medical" in result.output
    assert "ragchat ingest <files or folder> --kb sailing" in result.output
    assert "Traceback" not in result.output


def test_users_add_list_and_passwd(tmp_path: Path) -> None:
    """An operator's accounts: the person signs in on the page with them."""
    data = ["--data-dir", str(tmp_path)]
    weak = runner.invoke(app, ["users", "add", "ada", "--password-stdin", *data], input="short\n")
    assert weak.exit_code == 2 and "at least 8 characters" in weak.output
    made = runner.invoke(
        app,
        ["users", "add", "Ada", "--display-name", "Ada L", "--password-stdin", *data],
        input="a good long password\n",
    )
    assert made.exit_code == 0, made.output
    again = runner.invoke(
        app, ["users", "add", "ADA", "--password-stdin", *data], input="another password\n"
    )
    assert again.exit_code == 2 and "taken" in again.output
    listed = runner.invoke(app, ["users", "list", *data], terminal_width=200)
    assert "ada" in listed.output and "Ada L" in listed.output
    changed = runner.invoke(
        app, ["users", "passwd", "ada", "--password-stdin", *data], input="a brand new one\n"
    )
    assert changed.exit_code == 0, changed.output
    missing = runner.invoke(
        app, ["users", "passwd", "bob", "--password-stdin", *data], input="whatever long\n"
    )
    assert missing.exit_code == 3

    from ragchat.api.limits import RateLimits
    from ragchat.api.services.accounts import AccountService
    from ragchat.settings import Settings
    from ragchat.store import build_store

    settings = Settings(data_dir=tmp_path)
    store = build_store(settings)
    try:
        accounts = AccountService(settings.auth, store, RateLimits(0, 0))
        signed = accounts.sign_in(
            "ada", "a brand new one", current=None, claim=False, address="cli"
        )
        assert signed.user.display_name == "Ada L"
    finally:
        store.close()


def test_ingest_refuses_a_name_that_differs_only_in_case(data_dir: Path) -> None:
    result = runner.invoke(
        app,
        ["ingest", str(SAMPLE_KB_DIR / "medical"), "--kb", "Medical", "--data-dir", str(data_dir)],
        terminal_width=200,
    )
    assert result.exit_code == 2, result.output
    assert "'medical' exists" in result.output and "--kb medical" in result.output
