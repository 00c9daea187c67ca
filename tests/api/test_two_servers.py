"""Two ``ragchat serve`` processes, each with its own data directory, on one PostgreSQL that
holds both the chat store and the knowledge bases (pgvector): the deployment docs/deployment.md
recommends past one machine. What one server commits the other serves at once; a private upload
stays private on both; a server killed (SIGKILL) mid-upload loses nothing acknowledged, the
other marks the upload interrupted, serves on, and a re-run is clean.

Both run on this machine's loopback (``test_two_hosts.py``: the same on separate network
namespaces, as root). Needs RAGCHAT_TEST_PGVECTOR_URL (``scripts/pgvector start``)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import httpx
import pytest

from ragchat.settings import Settings, VectorStoreSettings
from ragchat.store.database import scratch_schema
from ragchat.vectorstores import factory as stores

from .live_server import LiveServer, wait_job

URL = os.environ.get("RAGCHAT_TEST_PGVECTOR_URL", "")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(not URL, reason="RAGCHAT_TEST_PGVECTOR_URL is not set (scripts/pgvector)"),
]

ROTA = b"# Pharmacy rota\n\nThe Riverside pharmacy night rota lists Dr Okafor on the 10th.\n"
QUESTION = "Who is on the Riverside pharmacy night rota on the 10th?"
BIG = "# Wombats\n\n" + "\n\n".join(
    f"Paragraph {i}: wombats dig burrows of {i % 40 + 2} metres and sleep in them by day."
    for i in range(6000)
)


def sources(client: httpx.Client) -> list[str]:
    """The files cited; [] when the knowledge base holds nothing the caller may see."""
    r = client.post("/query", json={"question": QUESTION, "kb": "notes"})
    if r.status_code == 404 and r.json()["error"]["type"] == "knowledge_base_not_visible":
        return []
    assert r.status_code == 200, r.text
    return [s["source"] for s in r.json()["sources"]]


def test_two_servers_share_one_postgresql_and_survive_a_kill(tmp_path: Path) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with scratch_schema(URL) as chat_url:
        env = {
            "RAGCHAT_DATABASE_URL": chat_url,
            "RAGCHAT_VECTOR_STORE__BACKEND": "pgvector",
            "RAGCHAT_VECTOR_STORE__URL": URL,
            "RAGCHAT_VECTOR_STORE__PG_SCHEMA": schema,
            "RAGCHAT_API__COOKIE_SECRET": "one-secret-for-both-servers-0123456789",
            "RAGCHAT_API__RECOVERY": "expired",
            "RAGCHAT_API__LEASE_S": "3",
            "RAGCHAT_API__RATE_LIMIT_STORE": "database",
            "RAGCHAT_RETRIEVAL__RERANK": "false",
        }
        a = LiveServer(tmp_path / "a", tmp_path / "a.log", **env)
        b = LiveServer(tmp_path / "b", tmp_path / "b.log", **env)
        settings = Settings(
            vector_store=VectorStoreSettings(backend="pgvector", url=URL, pg_schema=schema)
        )
        try:
            with (
                httpx.Client(base_url=a.url, timeout=120) as owner_a,
                httpx.Client(base_url=b.url, timeout=120) as stranger_b,
            ):
                for person in (owner_a, stranger_b):  # an identity first, as the page does
                    assert person.get("/users/me").status_code == 200
                r = owner_a.post("/kb/notes/documents", files={"files": ("rota.md", ROTA)})
                assert r.status_code == 202, r.text
                wait_job(owner_a, r.json()["job_id"], lambda j: j["status"] == "done")
                done = time.monotonic()
                with httpx.Client(base_url=b.url, timeout=120, cookies=owner_a.cookies) as owner_b:
                    # The owner through the other server: the first query after the commit.
                    assert "rota.md" in sources(owner_b)
                    print(f"served by B {time.monotonic() - done:.2f} s after A's commit")
                    assert "rota.md" not in sources(stranger_b)  # private on B too

                    # A dies mid-upload: nothing of it is committed; B marks it interrupted.
                    r = owner_a.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
                    job_id = r.json()["job_id"]
                    wait_job(owner_a, job_id, lambda j: j["status"] == "running")
                    time.sleep(1.0)
                    a.kill()
                    job = wait_job(owner_b, job_id, lambda j: "interrupted" in (j["message"] or ""))
                    assert job["status"] == "failed"
                    files = [d["file"] for d in owner_b.get("/kb/notes/documents").json()]
                    assert files == ["rota.md"]
                    assert stores.check_kb(settings, "notes").ok
                    # B serves on, and the upload re-runs cleanly through it.
                    assert "rota.md" in sources(owner_b)
                    r = owner_b.post("/kb/notes/documents", files={"files": ("big.md", BIG)})
                    again = wait_job(owner_b, r.json()["job_id"], lambda j: j["status"] == "done")
                    assert again["result"]["added_files"] == 1
            assert stores.check_kb(settings, "notes").ok
        finally:
            a.kill()
            b.kill()
            from ragchat.vectorstores.pgvector.conn import drop_schema

            drop_schema(settings)
