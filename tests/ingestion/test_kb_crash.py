"""kill -9 at every phase of a knowledge-base write (issue 18): a real ``ragchat ingest`` process
and a real server handling an upload are SIGKILLed at a crash point (crashpoints.py),
twice in a row; afterwards the knowledge base opens with the counts of one clean run, before
or after the write, and ingesting the same file again ends with the counts of a clean run.

The embedder is the fake one (patched into the child process), so a run costs process
start-up, not embedding."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.store.database import scratch_schema
from ragchat.vectorstores.embedded.kb import KnowledgeBase

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"
KB = "sci"
# Every crash point, in the order a write reaches it; all but the last are before the commit.
POINTS = [
    "ingest.parse",
    "ingest.embed",
    "ingest.chunks",
    "ingest.documents",
    "save.begin",
    "save.chunks",
    "save.dense",
    "save.bm25",
    "save.manifest",
    "save.fsync",
    "save.flipped",
]
COMMITTED = {"save.flipped"}

CLI = """
import sys
from ragchat.embed import factory as embedder
from ragchat.embed.fake import HashingEmbedder
fake = HashingEmbedder()
embedder.load_embedder = lambda settings: fake
from ragchat.cli import app
app(sys.argv[1:], prog_name="ragchat")
"""

# The real server with a fake chat engine (answers are not under test; start-up stays short).
SERVER = """
import sys
import uvicorn
sys.path.insert(0, sys.argv[2])
from api.fakes import FakeEngine
from ragchat.api import create_app
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings
app = create_app(Settings(), engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None)
"""
TESTS = Path(__file__).resolve().parents[1]


def _corpus(path: Path, start: int, n: int) -> Path:
    lines = [
        json.dumps(
            {
                "_id": str(i),
                "title": f"Finding {i}",
                "text": f"Study {i} reports that compound {i % 7} changes marker {i % 11} in "
                f"cohort {i}. The effect size was {i / 10:.1f} and replicated {i % 3} times.",
            }
        )
        for i in range(start, start + n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _env(
    data: Path, crash: str | None, database_url: str | None = None, runner: str | None = None
) -> dict[str, str]:
    keep = ("RAGCHAT_VECTOR_STORE__BACKEND",)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_") or k in keep}
    if database_url:
        env["RAGCHAT_DATABASE_URL"] = database_url
    env.update(
        PYTHONPATH=str(SRC),
        RAGCHAT_DATA_DIR=str(data),
        RAGCHAT_EMBEDDING__PREWARM_SENTENCES="false",
        RAGCHAT_API__RATE_LIMIT_PER_MINUTE="10000",
        RAGCHAT_RETRIEVAL__RERANK="false",  # no cross-encoder to look for: a faster /health
    )
    if crash:
        env["RAGCHAT_CRASH_AT"] = crash
    if runner:
        env["RAGCHAT_API__INGEST_RUNNER"] = runner
    return env


def ingest(data: Path, corpus: Path, crash: str | None = None) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "ingest", str(corpus), "--kb", KB, "--data-dir", str(data)],
        env=_env(data, crash),
        capture_output=True,
        text=True,
        timeout=180,
    )
    if crash is None:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.returncode


def counts(data: Path) -> dict[str, int]:
    """Opens the knowledge base as the next start would (recovering it) and counts."""
    kb = KnowledgeBase.open(data / "kb", KB, HashingEmbedder())
    try:
        return {
            "children": kb.child_count(),
            "bm25": len(kb.bm25),
            "parents": len(kb.parents()),
            "documents": len(kb.catalogue.documents()),
            "files": len(kb.catalogue.files()),
            "manifest": kb.manifest.children,
        }
    finally:
        kb.close()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One clean run of each state: part 1 ingested (the base every test copies), and parts 1
    and 2 ingested (what a write of part 2 must end with)."""
    tmp = tmp_path_factory.mktemp("crash")
    part1 = _corpus(tmp / "part1.jsonl", 0, 40)
    part2 = _corpus(tmp / "part2.jsonl", 40, 40)
    base = tmp / "base"
    ingest(base, part1)
    full = tmp / "full"
    shutil.copytree(base, full)
    ingest(full, part2)
    kb = KnowledgeBase.open(base / "kb", KB, HashingEmbedder())
    chunk = kb.children()[0].chunk_id
    kb.close()
    return {
        "chunk": chunk,
        "part1": part1,
        "part2": part2,
        "base": base,
        "before": counts(base),
        "after": counts(full),
    }


def _runs(point: str) -> int:
    """Kills in a row at ``point``: once a kill comes after the commit there is nothing left
    to write (the next run finds the file ingested)."""
    return 1 if point in COMMITTED else 2


def _fresh(setup: dict[str, Any], tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(setup["base"], data)
    return data


@pytest.mark.parametrize("point", POINTS)
def test_cli_ingest_killed_at_every_phase_recovers(
    point: str, setup: dict[str, Any], tmp_path: Path
) -> None:
    data = _fresh(setup, tmp_path)
    assert setup["before"]["children"] < setup["after"]["children"]
    for _ in range(_runs(point)):
        assert ingest(data, setup["part2"], crash=point) == -signal.SIGKILL
        expected = setup["after"] if point in COMMITTED else setup["before"]
        assert counts(data) == expected
    ingest(data, setup["part2"])
    assert counts(data) == setup["after"]


@pytest.mark.parametrize("point", ["save.dense", "save.fsync", "save.flipped"])
def test_cli_first_write_to_an_old_layout_killed_recovers(
    point: str, setup: dict[str, Any], tmp_path: Path
) -> None:
    """A knowledge base written before generations moves into one on its first write; a kill
    during that write leaves the old layout (or the new generation) usable."""
    data = _fresh(setup, tmp_path)
    path = data / "kb" / KB
    committed = path / (path / "CURRENT").read_text().strip()
    for f in committed.iterdir():
        shutil.copy(f, path / f.name)
    for g in path.glob("g*"):
        shutil.rmtree(g)
    (path / "CURRENT").unlink()
    assert counts(data) == setup["before"]  # the old layout opens as it is
    assert ingest(data, setup["part2"], crash=point) == -signal.SIGKILL
    assert counts(data) == (setup["after"] if point in COMMITTED else setup["before"])
    ingest(data, setup["part2"])
    assert counts(data) == setup["after"]
    assert (path / "CURRENT").is_file() and not (path / "manifest.json").exists()


def test_cli_replacing_a_changed_file_killed_mid_save_keeps_the_old_version(
    setup: dict[str, Any], tmp_path: Path
) -> None:
    """A changed file deletes the old documents and adds the new ones in one commit."""
    data = _fresh(setup, tmp_path)
    part1 = tmp_path / "part1.jsonl"
    shutil.copy(setup["part1"], part1)
    ingest(data, part1)  # same bytes, another path: recorded as a second file
    before = counts(data)
    _corpus(part1, 0, 30)  # now 30 records instead of 40: a replace
    assert ingest(data, part1, crash="save.dense") == -signal.SIGKILL
    assert counts(data) == before
    ingest(data, part1)
    assert counts(data)["files"] == before["files"]


# -- the server -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(
        self,
        data: Path,
        crash: str | None = None,
        database_url: str | None = None,
        runner: str | None = None,
    ):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(self.port), str(TESTS)],
            env=_env(data, crash, database_url, runner),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(self.proc.stderr.read().decode()[-3000:])  # type: ignore[union-attr]
            try:  # uvicorn listens once the lifespan's start-up has finished
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("server did not start")

    def upload(self, client: httpx.Client, corpus: Path) -> str:
        if not client.cookies:  # an upload needs an identity (its cookie survives restarts)
            client.post(f"{self.url}/users", json={}).raise_for_status()
        r = client.post(
            f"{self.url}/kb/{KB}/documents", files={"files": (corpus.name, corpus.read_bytes())}
        )
        assert r.status_code in (200, 202), r.text
        return str(r.json()["job_id"])

    def wait_job(self, client: httpx.Client, job_id: str) -> dict[str, Any]:
        deadline = time.time() + 120
        while time.time() < deadline:
            job = client.get(f"{self.url}/jobs/{job_id}").json()
            if job["status"] in ("done", "failed"):
                return dict(job)
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} did not finish")

    def wait_killed(self) -> int:
        return self.proc.wait(timeout=120)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """Job rows in the data directory's SQLite, or in a schema of its own on the PostgreSQL
    of RAGCHAT_TEST_DATABASE_URL (``scripts/postgres start``)."""
    if request.param == "sqlite":
        yield None
        return
    url = os.environ.get("RAGCHAT_TEST_DATABASE_URL")
    if not url:
        pytest.skip("RAGCHAT_TEST_DATABASE_URL is not set (see scripts/postgres)")
    with scratch_schema(url) as scoped:
        yield scoped


def _runner(point: str) -> str | None:
    """With the default runner an upload parses and embeds in a worker process and the server
    commits (the save.* points are the server's); the ingest.* points are reached in the
    server only when the job runs in its thread, so those points use that runner."""
    return "thread" if point.startswith("ingest.") else None


@pytest.mark.parametrize("point", POINTS)
def test_upload_killed_at_every_phase_recovers(
    point: str,
    setup: dict[str, Any],
    tmp_path: Path,
    servers: list[Server],
    database_url: str | None,
) -> None:
    data = _fresh(setup, tmp_path)
    runner = _runner(point)
    with httpx.Client(timeout=30) as client:
        for _ in range(_runs(point)):
            server = Server(data, crash=point, database_url=database_url, runner=runner)
            servers.append(server)
            job_id = server.upload(client, setup["part2"])
            assert server.wait_killed() == -signal.SIGKILL
            expected = setup["after"] if point in COMMITTED else setup["before"]
            assert counts(data) == expected
        server = Server(data, database_url=database_url)
        servers.append(server)
        killed = client.get(f"{server.url}/jobs/{job_id}").json()
        assert killed["status"] == "failed" and "interrupted" in killed["message"], killed
        health = client.get(server.url + "/health").json()
        assert health["knowledge_bases"][KB]["status"] == "ok", health
        assert f"kb:{KB}" not in health["degraded"]
        listed = client.get(server.url + "/kb")
        assert listed.status_code == 200 and KB in [k["name"] for k in listed.json()]
        passage = client.get(f"{server.url}/passages/{setup['chunk']}")
        assert passage.status_code == 200, passage.text
        job = server.wait_job(client, server.upload(client, setup["part2"]))
        assert job["status"] == "done", job
        server.stop()
    assert counts(data) == setup["after"]


# -- SIGTERM (what systemd or a container stop sends) at every phase ------------------------


@pytest.mark.parametrize("point", POINTS)
def test_cli_ingest_terminated_at_every_phase_recovers(
    point: str, setup: dict[str, Any], tmp_path: Path
) -> None:
    data = _fresh(setup, tmp_path)
    assert ingest(data, setup["part2"], crash=f"{point}@TERM") == -signal.SIGTERM
    assert counts(data) == (setup["after"] if point in COMMITTED else setup["before"])
    ingest(data, setup["part2"])
    assert counts(data) == setup["after"]


@pytest.mark.parametrize("point", POINTS)
def test_upload_terminated_at_every_phase_exits_promptly_and_recovers(
    point: str,
    setup: dict[str, Any],
    tmp_path: Path,
    servers: list[Server],
    database_url: str | None,
) -> None:
    """The server stops the job at its next safe point (nothing saved) or, once the save has
    begun, lets the commit finish; it exits by itself, and the next start sees one state or
    the other, never a mix."""
    data = _fresh(setup, tmp_path)
    runner = _runner(point)
    with httpx.Client(timeout=30) as client:
        server = Server(data, crash=f"{point}@TERM", database_url=database_url, runner=runner)
        servers.append(server)
        job_id = server.upload(client, setup["part2"])
        # It exits by itself (uvicorn re-raises the signal once shut down: -SIGTERM).
        assert server.proc.wait(timeout=30) in (0, -signal.SIGTERM)
        found = counts(data)
        assert found in (setup["before"], setup["after"]), found
        if point.startswith("save."):
            assert found == setup["after"]  # a begun save is finished, not torn
        server = Server(data, database_url=database_url)
        servers.append(server)
        job = client.get(f"{server.url}/jobs/{job_id}").json()
        if found == setup["after"]:
            assert job["status"] == "done", job
        else:
            assert job["status"] == "failed" and "interrupted" in job["message"], job
        again = server.wait_job(client, server.upload(client, setup["part2"]))
        assert again["status"] == "done", again
        server.stop()
    assert counts(data) == setup["after"]


# -- Qdrant (local mode): no transactions, so the guarantee is convergence ------------------


def _qdrant_counts(data: Path) -> tuple[dict[str, int], list[str]]:
    """(counts, problems ``kb check`` finds) of the Qdrant knowledge base, then the local
    store's lock is released for the next process."""
    from ragchat.settings import Settings, VectorStoreSettings
    from ragchat.vectorstores import factory as stores
    from ragchat.vectorstores.qdrant.conn import release

    settings = Settings(data_dir=data, vector_store=VectorStoreSettings(backend="qdrant"))
    try:
        kb = stores.open_kb(settings, KB, HashingEmbedder())
        found = {
            "children": kb.child_count(),
            "parents": len(kb.parents()),
            "documents": len(kb.catalogue.documents()),
            "files": len(kb.catalogue.files()),
        }
        return found, stores.check_kb(settings, KB).problems
    finally:
        release(settings)


@pytest.mark.parametrize("point", ["ingest.embed", "ingest.chunks", "ingest.documents"])
def test_qdrant_ingest_killed_mid_write_converges(
    point: str, setup: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its chunk points, a write leaves them searchable and ``kb check`` names
    them; re-ingesting the file (or ``kb repair``) ends with the counts of a clean run."""
    pytest.importorskip("qdrant_client")
    monkeypatch.setenv("RAGCHAT_VECTOR_STORE__BACKEND", "qdrant")
    clean, data = tmp_path / "clean", tmp_path / "data"
    for target in (clean, data):
        ingest(target, setup["part1"])
    before, _ = _qdrant_counts(data)
    ingest(clean, setup["part2"])
    after, problems = _qdrant_counts(clean)
    assert problems == []
    assert ingest(data, setup["part2"], crash=point) == -signal.SIGKILL
    _, problems = _qdrant_counts(data)
    if point == "ingest.chunks":
        assert any("no document row" in p for p in problems), problems
    ingest(data, setup["part2"])
    found, problems = _qdrant_counts(data)
    assert (found, problems) == (after, [])
    assert before["children"] < after["children"]
