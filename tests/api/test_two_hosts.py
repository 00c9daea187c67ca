"""Two ``ragchat serve`` hosts on separate network namespaces (``ip netns``, a veth pair each)
and the database in the root namespace, reached through each host's own link: what docs/
deployment.md recommends past one machine, with real addresses. An upload through host A is
cited through host B right after its commit and stays private; host A killed (SIGKILL)
mid-upload loses nothing acknowledged, B marks the upload interrupted, serves on and re-runs it
cleanly; A restarted and killed in the middle of a streamed reply: the question is kept, B marks
the reply interrupted, and the conversation carries on through B.

Root only (namespaces), and RAGCHAT_TEST_PGVECTOR_URL (``scripts/pgvector start``, which
listens on 127.0.0.1: a small forwarder in this process gives each namespace a database address
on its link)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragchat.settings import Settings, VectorStoreSettings
from ragchat.store.database import scratch_schema
from ragchat.vectorstores import factory as stores

from .live_server import CLI, serve_env, wait_job

URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL", "")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set (scripts/pgvector)"),
    pytest.mark.skipif(
        os.geteuid() != 0 or not shutil.which("ip"), reason="network namespaces need root and ip"
    ),
]
PORT = 8000
ROTA = b"# Pharmacy rota\n\nThe Riverside pharmacy night rota lists Dr Okafor on the 10th.\n"
BIG = "# Wombats\n\n" + "\n\n".join(
    f"Paragraph {i}: wombats dig burrows of {i % 40 + 2} metres and sleep in them by day."
    for i in range(6000)
)


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextmanager
def namespace(name: str, subnet: int) -> Iterator[tuple[str, str]]:
    """A namespace linked to this one by a veth pair: (this side's address, its address)."""
    here, there = f"10.231.{subnet}.1", f"10.231.{subnet}.2"
    host_if, ns_if = f"rcv{subnet}h", f"rcv{subnet}n"
    ip("netns", "add", name)
    try:
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        ip("link", "set", ns_if, "netns", name)
        ip("addr", "add", f"{here}/30", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("netns", "exec", name, "ip", "addr", "add", f"{there}/30", "dev", ns_if)
        ip("netns", "exec", name, "ip", "link", "set", ns_if, "up")
        ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield here, there
    finally:
        with suppress(subprocess.CalledProcessError):
            ip("link", "del", host_if)
        ip("netns", "del", name)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def forward(listen: str, port: int, target: tuple[str, int]) -> socket.socket:
    """Accepts on ``listen:port`` and relays each connection to ``target`` (the database)."""
    server = socket.create_server((listen, port))

    def accept() -> None:
        with suppress(OSError):
            while True:
                client, _ = server.accept()
                upstream = socket.create_connection(target)
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server


def start_host(ns: str, data: Path, address: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-c", CLI, "serve"]
    cmd += ["--host", address, "--port", str(PORT), "--data-dir", str(data)]
    with (data.parent / f"{ns}.log").open("ab") as log:
        return subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=serve_env(**env), start_new_session=True
        )


def wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        with suppress(httpx.HTTPError):
            httpx.get(f"{url}/health", timeout=2)
            return
        time.sleep(0.3)
    raise AssertionError(log.read_text()[-3000:])


@dataclass
class Turn:
    events: list[tuple[str, Any]] = field(default_factory=list)

    def first(self, name: str) -> Any:
        return next((data for event, data in self.events if event == name), None)


def stream_turn(client: httpx.Client, message: str, session_id: str | None = None) -> Turn:
    """The events received before the stream ended or the connection died."""
    turn, event = Turn(), None
    body: dict[str, Any] = {
        "message": message,
        **({"session_id": session_id} if session_id else {}),
    }
    with (
        suppress(httpx.HTTPError),
        client.stream("POST", "/chat/stream", json=body, timeout=60) as r,
    ):
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event:
                turn.events.append((event, json.loads(line[5:])))
    return turn


def wait_reply(client: httpx.Client, cid: str, until: Any) -> list[dict[str, Any]]:
    """The conversation's messages once its assistant reply satisfies ``until``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        messages = client.get(f"/conversations/{cid}/messages").json()
        replies = [m for m in messages if m["role"] == "assistant"]
        if replies and until(replies[-1]):
            return list(messages)
        time.sleep(0.3)
    raise AssertionError(f"conversation {cid}: {messages}")


def sources(client: httpx.Client) -> list[str]:
    q = {"question": "Who is on the Riverside pharmacy night rota on the 10th?", "kb": "notes"}
    r = client.post("/query", json=q)
    if r.status_code == 404 and r.json()["error"]["type"] == "knowledge_base_not_visible":
        return []
    assert r.status_code == 200, r.text
    return [s["source"] for s in r.json()["sources"]]


def test_two_hosts_on_their_own_addresses_share_one_database(tmp_path: Path) -> None:
    db = httpx.URL(URL.replace("postgresql+psycopg://", "http://"))
    schema, tag = f"t_{uuid.uuid4().hex[:12]}", uuid.uuid4().hex[:6]
    settings = Settings(
        vector_store=VectorStoreSettings(backend="pgvector", url=URL, pg_schema=schema)
    )
    procs: list[subprocess.Popen[bytes]] = []
    with (
        scratch_schema(URL) as chat_url,
        namespace(f"rca{tag}", 1) as (a_db, a_addr),
        namespace(f"rcb{tag}", 2) as (b_db, b_addr),
    ):
        relays = [forward(addr, 55999, (db.host, db.port or 5432)) for addr in (a_db, b_db)]
        try:
            hosts = {}
            setups: dict[str, tuple[str, str, dict[str, str]]] = {}
            for name, ns, db_addr, addr in (
                ("a", f"rca{tag}", a_db, a_addr),
                ("b", f"rcb{tag}", b_db, b_addr),
            ):
                (tmp_path / name).mkdir()

                def via(url: str, db_addr: str = db_addr) -> str:
                    return url.replace(f"{db.host}:{db.port}", f"{db_addr}:55999")

                env = {
                    "RAGCHAT_DATABASE_URL": via(chat_url),
                    "RAGCHAT_VECTOR_STORE__BACKEND": "pgvector",
                    "RAGCHAT_VECTOR_STORE__URL": via(URL),
                    "RAGCHAT_VECTOR_STORE__PG_SCHEMA": schema,
                    "RAGCHAT_API__COOKIE_SECRET": "one-secret-for-both-hosts-0123456789",
                    "RAGCHAT_API__RECOVERY": "expired",
                    "RAGCHAT_API__LEASE_S": "3",
                    "RAGCHAT_API__RATE_LIMIT_STORE": "database",
                    "RAGCHAT_RETRIEVAL__RERANK": "false",
                }
                procs.append(start_host(ns, tmp_path / name, addr, env))
                hosts[name] = f"http://{addr}:{PORT}"
                setups[name] = (ns, addr, env)
            for proc, (name, url) in zip(procs, hosts.items(), strict=True):
                wait_ready(proc, url, tmp_path / f"rc{name}{tag}.log")
            with (
                httpx.Client(base_url=hosts["a"], timeout=120) as owner_a,
                httpx.Client(base_url=hosts["b"], timeout=120) as stranger_b,
            ):
                for person in (owner_a, stranger_b):  # an identity first, as the page does
                    assert person.get("/users/me").status_code == 200
                r = owner_a.post("/kb/notes/documents", files={"files": ("rota.md", ROTA)})
                wait_job(owner_a, r.json()["job_id"], lambda j: j["status"] == "done")
                done = time.monotonic()
                # The same user on the other host: the signed cookie, without A's domain.
                cookie = {c.name: c.value for c in owner_a.cookies.jar}
                with httpx.Client(base_url=hosts["b"], timeout=120, cookies=cookie) as owner_b:
                    assert "rota.md" in sources(owner_b)
                    print(f"host B cited it {time.monotonic() - done:.2f} s after A's commit")
                    assert "rota.md" not in sources(stranger_b)
                    r = owner_a.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
                    job_id = r.json()["job_id"]
                    wait_job(owner_a, job_id, lambda j: j["status"] == "running")
                    time.sleep(1.0)
                    os.killpg(procs[0].pid, 9)
                    procs[0].wait()
                    job = wait_job(owner_b, job_id, lambda j: "interrupted" in (j["message"] or ""))
                    assert job["status"] == "failed"
                    files = [d["file"] for d in owner_b.get("/kb/notes/documents").json()]
                    assert files == ["rota.md"]
                    assert "rota.md" in sources(owner_b)
                    r = owner_b.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
                    again = wait_job(owner_b, r.json()["job_id"], lambda j: j["status"] == "done")
                    assert again["result"]["added_files"] == 1

                    # A again, killed in the middle of a streamed reply this time.
                    ns, addr, env = setups["a"]
                    procs[0] = start_host(
                        ns, tmp_path / "a", addr, {**env, "RAGCHAT_CRASH_AT": "chat.token#3"}
                    )
                    wait_ready(procs[0], hosts["a"], tmp_path / f"rca{tag}.log")
                    turn = stream_turn(owner_a, "I feel anxious about my exams")
                    assert procs[0].wait(60) == -9
                    meta = turn.first("metadata")
                    assert meta is not None and turn.first("final") is None
                    cid = meta["session_id"]
                    reply = wait_reply(owner_b, cid, lambda m: m["status"] == "interrupted")
                    question = [m for m in reply if m["role"] == "user"]
                    assert [m["content"] for m in question] == ["I feel anxious about my exams"]
                    # The conversation carries on through B.
                    after = stream_turn(owner_b, "Thank you, that helps a little", cid)
                    assert after.first("final") is not None, after.events
            assert stores.check_kb(settings, "notes").ok
        finally:
            for proc in procs:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                proc.wait()
            for relay in relays:
                relay.close()
            from ragchat.vectorstores.pgvector.conn import drop_schema

            drop_schema(settings)
