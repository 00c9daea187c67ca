"""One server per data directory, and ``ragchat serve`` stopping promptly on SIGTERM.

The lock tests start ``ragchat serve`` for real but it never gets as far as listening; the
SIGTERM tests (slow) run a real server with the real embedding model, a real upload and a
real signal."""

from __future__ import annotations

import os
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

from ragchat.api.datadir import hold_data_dir
from ragchat.api.services.documents import SHUTDOWN_JOB_MESSAGE
from ragchat.errors import DataDirInUse
from ragchat.settings import Settings
from ragchat.store import build_store

CLI = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"
HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from ragchat.api.datadir import hold_data_dir\n"
    "with hold_data_dir(Path(sys.argv[1])):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(300)\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_cmd(data: Path, port: int) -> list[str]:
    return [sys.executable, "-c", CLI, "serve", "--port", str(port), "--data-dir", str(data)]


def _env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES": "false",
        "RAGCHAT_API__RATE_LIMIT_PER_MINUTE": "0",
        "RAGCHAT_EMBEDDING__PREWARM_SENTENCES": "false",
        "COLUMNS": "300",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``tmp_path/data``'s lock."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "data")], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_the_lock_names_its_holder_and_dies_with_it(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    expected = f"another ragchat server \\(pid {holder.pid}\\)"
    with pytest.raises(DataDirInUse, match=expected), hold_data_dir(tmp_path / "data"):
        pass
    holder.kill()
    holder.wait()
    with hold_data_dir(tmp_path / "data"), hold_data_dir(tmp_path / "data"):
        pass  # free again (the kernel dropped it), and taken twice by one process


def test_a_second_server_touches_nothing_and_exits_8(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    """Before: the second server marked the live one's running upload failed, then died on
    the busy port. Now it stops before opening anything, naming the running server."""
    settings = Settings(data_dir=tmp_path / "data")
    store = build_store(settings)
    user = store.ensure_user()
    job = store.create_job(user.id, "notes", total=1)
    store.update_job(job.id, status="running", message="embed 64/500")
    store.close()
    result = subprocess.run(
        _serve_cmd(tmp_path / "data", _free_port()),
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert result.returncode == 8, result.stdout + result.stderr
    assert f"another ragchat server (pid {holder.pid})" in result.stderr
    after = build_store(settings)
    assert after.get_job(user.id, job.id).status == "running"
    after.close()


# -- a real server, a real signal ----------------------------------------------------------------
class LiveServer:
    def __init__(self, data: Path, log: Path, *, wait: bool = True, **env: str) -> None:
        self.data, self.log, self.port = data, log, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                _serve_cmd(data, self.port),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=_env(**env),
                start_new_session=True,
            )
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        log = self.log
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, log.read_text()
            try:
                httpx.get(f"{self.url}/health", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise AssertionError(f"server did not start:\n{log.read_text()}")

    def stop_with_sigterm(self) -> float:
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - start

    def group_alive(self) -> bool:
        try:
            os.killpg(self.proc.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _wait_job(client: httpx.Client, job_id: str, until: Any, timeout: float = 240) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if until(job):
            return job
        assert job["status"] not in ("done", "failed"), job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never got there: {job}")


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
            _wait_job(client, small.json()["job_id"], lambda j: j["status"] == "done")
            r = client.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
            job_id = r.json()["job_id"]
            _wait_job(client, job_id, lambda j: j["message"].startswith("embed "))
            time.sleep(1.0)
            # A second server on the same directory while the upload runs: refused, harmless.
            second = subprocess.run(
                _serve_cmd(data, _free_port()),
                capture_output=True,
                text=True,
                timeout=300,
                env=_env(),
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
            done = _wait_job(client, r.json()["job_id"], lambda j: j["status"] == "done")
            assert done["result"]["added_files"] == 1
    finally:
        again.kill()


def endless_pdf() -> bytes:
    """A one-page PDF of ~30 KB whose text takes minutes to extract (tests/ingest/conftest.py
    has this builder's siblings)."""
    import zlib

    body = b"BT /F1 12 Tf " + b"(word ) Tj " * 3_000_000 + b" ET"
    data = zlib.compress(body, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for num, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


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
            _wait_job(client, job_id, lambda j: j["status"] == "running")
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
