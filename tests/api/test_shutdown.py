"""``ragchat serve`` stops within seconds on SIGTERM, whatever it is doing: a real server,
the real embedding model, real uploads and a real signal (slow). Before: it closed its port
at once, then waited minutes for the running upload (still alive 45 s after the signal)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from ragchat.api.services.documents import SHUTDOWN_JOB_MESSAGE
from ragchat.settings import Settings
from ragchat.store import build_store

from .live_server import LiveServer, endless_pdf, free_port, serve_cmd, serve_env, wait_job


@pytest.fixture
def api_key(tmp_path: Path) -> tuple[str, str]:
    store = build_store(Settings(data_dir=tmp_path / "data"))
    user = store.ensure_user()
    _, secret = store.create_api_key(user.id, "test")
    store.close()
    return user.id, secret


BIG = "\n\n".join(
    f"Section {i}. Quokkas on Rottnest Island eat leaves, grasses and succulents; note {i} "
    f"records how group {i % 17} rested in the shade during the hot afternoon hours."
    for i in range(12_000)
).encode()


@pytest.mark.slow
def test_sigterm_during_embedding_exits_within_seconds(
    tmp_path: Path, api_key: tuple[str, str]
) -> None:
    user_id, secret = api_key
    data = tmp_path / "data"
    server = LiveServer(data, tmp_path / "server.log")
    headers = {"Authorization": f"Bearer {secret}"}
    try:
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            small = client.post(
                "/kb/notes/documents", files={"files": ("a.md", b"# A\n\nWombats dig.")}
            )
            wait_job(client, small.json()["job_id"], lambda j: j["status"] == "done")
            r = client.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
            job_id = r.json()["job_id"]
            wait_job(client, job_id, lambda j: j["message"].startswith("embed "))
            time.sleep(1.0)
            # A second server on the same directory while the upload runs: refused, harmless.
            second = subprocess.run(
                serve_cmd(data, free_port()),
                capture_output=True,
                text=True,
                timeout=300,
                env=serve_env(),
            )
            assert second.returncode == 8, second.stderr
            assert f"pid {server.proc.pid}" in second.stderr
            assert client.get(f"/jobs/{job_id}").json()["status"] == "running"
        took = server.stop_with_sigterm()
        assert took < 10.0, (took, server.log.read_text()[-3000:])
        assert not server.group_alive()
    finally:
        server.kill()
    store = build_store(Settings(data_dir=data))
    job = store.get_job(user_id, job_id)
    store.close()
    assert (job.status, job.message) == ("failed", SHUTDOWN_JOB_MESSAGE)
    print(f"SIGTERM during embedding ({job.progress:.0%} done): exited in {took:.2f} s")

    again = LiveServer(data, tmp_path / "server2.log")
    try:
        with httpx.Client(base_url=again.url, headers=headers, timeout=30) as client:
            files = [doc["file"] for doc in client.get("/kb/notes/documents").json()]
            assert files == ["a.md"]  # the interrupted upload left nothing
            r = client.post("/kb/notes/documents", files={"files": ("b.md", b"# B\n\nKoalas nap.")})
            done = wait_job(client, r.json()["job_id"], lambda j: j["status"] == "done")
            assert done["result"]["added_files"] == 1
    finally:
        again.kill()


@pytest.mark.slow
def test_sigterm_while_a_crafted_pdf_parses_exits_within_seconds(
    tmp_path: Path, api_key: tuple[str, str]
) -> None:
    user_id, secret = api_key
    data = tmp_path / "data"
    server = LiveServer(data, tmp_path / "server.log", RAGCHAT_INGEST__PARSE_TIMEOUT_S="600")
    try:
        headers = {"Authorization": f"Bearer {secret}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
            r = client.post("/kb/notes/documents", files={"files": ("endless.pdf", endless_pdf())})
            job_id = r.json()["job_id"]
            wait_job(client, job_id, lambda j: j["status"] == "running")
            time.sleep(3.0)  # well into the parse
            assert client.get(f"/jobs/{job_id}").json()["status"] == "running"
        took = server.stop_with_sigterm()
        assert took < 10.0, (took, server.log.read_text()[-3000:])
        assert not server.group_alive()  # the parser process went with it
    finally:
        server.kill()
    store = build_store(Settings(data_dir=data))
    assert store.get_job(user_id, job_id).message == SHUTDOWN_JOB_MESSAGE
    store.close()
    print(f"SIGTERM while a crafted PDF parses: exited in {took:.2f} s")


@pytest.mark.slow
def test_sigterm_during_the_start_up_ingestion_exits_within_seconds(tmp_path: Path) -> None:
    """A fresh data directory ingests the sample knowledge bases at start-up (~10 s on a busy
    2-core machine); a SIGTERM then used to wait for all of it."""
    data, log = tmp_path / "data", tmp_path / "server.log"
    server = LiveServer(data, log, wait=False, RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES="true")
    try:
        deadline = time.monotonic() + 120
        while "checking the configured knowledge bases" not in log.read_text():
            assert time.monotonic() < deadline and server.proc.poll() is None, log.read_text()
            time.sleep(0.05)
        time.sleep(1.0)
        took = server.stop_with_sigterm()
        text = log.read_text()
        assert "ingested knowledge base" not in text, "SIGTERM came too late to test anything"
        assert took < 10.0, (took, text[-3000:])
        assert "start-up stopped by a signal" in text
    finally:
        server.kill()
    print(f"SIGTERM during the start-up ingestion: exited in {took:.2f} s")
    again = LiveServer(data, tmp_path / "again.log", RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES="true")
    try:
        kbs = {k["name"]: k for k in httpx.get(f"{again.url}/kb", timeout=30).json()}
        assert kbs["medical"]["documents"] == 9  # the next start ingested them all
    finally:
        again.kill()
