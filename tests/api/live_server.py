"""A real ``ragchat serve`` in a subprocess (no sample ingestion, no prewarm, no rate limit)
for the tests that send it real signals or start a second one beside it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

CLI = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"
HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from ragchat.api.datadir import hold_data_dir\n"
    "with hold_data_dir(Path(sys.argv[1])):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(300)\n"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_cmd(data: Path, port: int, *args: str) -> list[str]:
    cmd = [sys.executable, "-c", CLI, "serve", "--port", str(port), "--data-dir", str(data)]
    return [*cmd, *args]


def serve_env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES": "false",
        "RAGCHAT_API__RATE_LIMIT_PER_MINUTE": "0",
        "RAGCHAT_EMBEDDING__PREWARM_SENTENCES": "false",
        "COLUMNS": "300",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


class LiveServer:
    def __init__(
        self,
        data: Path,
        log: Path,
        *,
        wait: bool = True,
        args: tuple[str, ...] = (),
        **env: str,
    ) -> None:
        self.data, self.log, self.port = data, log, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                serve_cmd(data, self.port, *args),
                stdout=out,
                stderr=subprocess.STDOUT,
                env=serve_env(**env),
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


def wait_job(client: httpx.Client, job_id: str, until: Any, timeout: float = 240) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if until(job):
            return job
        assert job["status"] not in ("done", "failed"), job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never got there: {job}")


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
