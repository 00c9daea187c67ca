"""``ragchat serve --workers 2`` on the PostgreSQL of ``scripts/postgres``: one user on both
workers, an upload ingested once and searchable from both, concurrent uploads into one
knowledge base from both, a worker killed mid-upload, a second server refused.

One server for the module (start-up loads the model in three processes); the kill comes last.
Which worker answered is the ``X-Ragchat-Worker`` header; the kernel hands connections to
either, so requests go in small concurrent batches, each on a new connection, until both
workers were seen."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from ragchat.store.database import scratch_schema

from .live_server import LiveServer, endless_pdf, free_port, serve_cmd, serve_env

PG_URL = os.environ.get("RAGCHAT_TEST_DATABASE_URL", "")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not PG_URL, reason="RAGCHAT_TEST_DATABASE_URL is not set (scripts/postgres start)"
    ),
]
WORKER = "x-ragchat-worker"


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A fresh schema on the test PostgreSQL, dropped afterwards."""
    with scratch_schema(PG_URL, "w") as url:
        yield url


@pytest.fixture(scope="module")
def server(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("workers")
    live = LiveServer(
        folder / "data",
        folder / "server.log",
        args=("--workers", "2"),
        RAGCHAT_DATABASE_URL=database,
        RAGCHAT_API__LEASE_S="3",
        RAGCHAT_INGEST__PARSE_TIMEOUT_S="30",
    )
    yield live
    live.stop_with_sigterm()
    live.kill()


@pytest.fixture(scope="module")
def key(server: LiveServer) -> str:
    created = httpx.post(
        f"{server.url}/users", json={"create_api_key": True, "display_name": "Ann"}
    )
    assert created.status_code in (200, 201), created.text
    return str(created.json()["api_key"]["secret"])


def on_both(
    call: Callable[[], httpx.Response],
    ok: Callable[[httpx.Response], bool] = lambda r: r.status_code == 200,
    timeout: float = 60,
) -> dict[str, httpx.Response]:
    """``call`` in batches of four concurrent requests until two workers each gave an
    answer that is ``ok``; their answers by worker pid."""
    good: dict[str, httpx.Response] = {}
    deadline = time.monotonic() + timeout
    with ThreadPoolExecutor(4) as pool:
        while time.monotonic() < deadline:
            for response in pool.map(lambda _: call(), range(4)):
                if ok(response):
                    good[response.headers[WORKER]] = response
            if len(good) >= 2:
                return good
            time.sleep(0.2)
    raise AssertionError(f"only worker(s) {sorted(good)} answered as expected")


def wait_done(server: LiveServer, key: str, job_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = get(server, key, f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return dict(job)
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish: {job}")


def get(server: LiveServer, key: str, path: str) -> httpx.Response:
    return httpx.get(f"{server.url}{path}", headers={"Authorization": f"Bearer {key}"})


def upload(server: LiveServer, key: str, name: str, data: bytes) -> httpx.Response:
    response = httpx.post(
        f"{server.url}/kb/notes/documents",
        headers={"Authorization": f"Bearer {key}"},
        files={"files": (name, data)},
        timeout=30,
    )
    assert response.status_code == 202, response.text
    return response


def note(word: str) -> bytes:
    return f"# About {word}\n\nThe {word} plant is watered every nine days in spring.\n".encode()


def asks(server: LiveServer, key: str, word: str) -> Callable[[], httpx.Response]:
    def call() -> httpx.Response:
        return httpx.post(
            f"{server.url}/query",
            headers={"Authorization": f"Bearer {key}"},
            json={"question": f"How often is the {word} plant watered?", "kb": "notes"},
            timeout=60,
        )

    return call


def finds(word: str) -> Callable[[httpx.Response], bool]:
    def ok(response: httpx.Response) -> bool:
        sources = response.json().get("sources", []) if response.status_code == 200 else []
        return any(word in s["preview"] for s in sources)

    return ok


def test_one_user_key_and_cookie_work_on_both_workers(server: LiveServer, key: str) -> None:
    me = on_both(lambda: get(server, key, "/users/me"))
    assert len({r.json()["id"] for r in me.values()}) == 1
    first = httpx.post(f"{server.url}/users", json={})
    cookies = dict(first.cookies)
    assert cookies, first.headers
    anon = on_both(lambda: httpx.get(f"{server.url}/users/me", cookies=cookies))
    assert {r.json()["id"] for r in anon.values()} == {first.json()["id"]}


def test_an_upload_is_ingested_once_and_searchable_from_both_workers(
    server: LiveServer, key: str
) -> None:
    accepted = upload(server, key, "zorblat.md", note("zorblat"))
    job_id = accepted.json()["job_id"]
    job = wait_done(server, key, job_id)
    assert job["status"] == "done", job
    seen = on_both(lambda: get(server, key, f"/jobs/{job_id}"))
    assert {r.json()["status"] for r in seen.values()} == {"done"}
    docs = on_both(lambda: get(server, key, "/kb/notes/documents"))
    for response in docs.values():
        rows = response.json()
        assert [d["file"] for d in rows] == ["zorblat.md"]
        assert sum(d["chunks"] for d in rows) == job["result"]["chunks"]
    on_both(asks(server, key, "zorblat"), finds("zorblat"))


def test_concurrent_uploads_from_both_workers_all_land(server: LiveServer, key: str) -> None:
    jobs: list[str] = []
    words: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        for attempt in range(6):  # until the two uploads reached different workers
            pair = [f"quib{attempt}", f"flon{attempt}"]
            sent = list(pool.map(lambda w: upload(server, key, f"{w}.md", note(w)), pair))
            jobs += [r.json()["job_id"] for r in sent]
            words += pair
            if len({r.headers[WORKER] for r in sent}) == 2:
                break
        else:
            pytest.fail("six pairs of concurrent uploads all reached one worker")
    for job_id in jobs:
        job = wait_done(server, key, job_id)
        assert job["status"] == "done", job
    expected = {"zorblat.md", *(f"{w}.md" for w in words)}

    def lists_all(response: httpx.Response) -> bool:
        return {d["file"] for d in response.json()} == expected

    on_both(lambda: get(server, key, "/kb/notes/documents"), lists_all)
    on_both(asks(server, key, words[-1]), finds(words[-1]))


def test_a_second_server_on_the_data_directory_exits_8(server: LiveServer) -> None:
    again = subprocess.run(
        serve_cmd(server.data, free_port(), "--workers", "2"),
        env=serve_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 8, again.stdout + again.stderr
    assert "another ragchat server" in again.stdout + again.stderr


def test_a_worker_killed_mid_upload_leaves_its_job_interrupted(
    server: LiveServer, key: str
) -> None:
    accepted = upload(server, key, "endless.pdf", endless_pdf())
    job_id, victim = accepted.json()["job_id"], int(accepted.headers[WORKER])
    deadline = time.monotonic() + 60
    while get(server, key, f"/jobs/{job_id}").json()["status"] != "running":
        assert time.monotonic() < deadline, "the upload never started"
        time.sleep(0.1)
    os.kill(victim, signal.SIGKILL)

    deadline = time.monotonic() + 60
    while (job := get(server, key, f"/jobs/{job_id}").json())["status"] == "running":
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    assert job["status"] == "failed"
    assert job["message"].startswith("interrupted: the server worker"), job
    assert job["result"] == {"interrupted": True}
    alive = on_both(lambda: httpx.get(f"{server.url}/health", timeout=30), timeout=120)
    assert str(victim) not in alive  # uvicorn replaced the dead worker
    assert server.proc.poll() is None
    on_both(asks(server, key, "zorblat"), finds("zorblat"))


def test_sigterm_stops_every_process_and_the_running_upload(
    server: LiveServer, key: str, database: str
) -> None:
    job_id = upload(server, key, "endless2.pdf", endless_pdf()).json()["job_id"]
    deadline = time.monotonic() + 60
    while get(server, key, f"/jobs/{job_id}").json()["status"] != "running":
        assert time.monotonic() < deadline, "the upload never started"
        time.sleep(0.1)

    assert server.stop_with_sigterm() < 30
    deadline = time.monotonic() + 10  # multiprocessing's resource tracker follows the parent
    while server.group_alive():
        assert time.monotonic() < deadline, "a process of the server outlived it"
        time.sleep(0.2)
    assert (server.data / "server.lock").read_text() == ""
    engine = create_engine(database)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT status, message FROM ingestion_jobs WHERE id = :id"), {"id": job_id}
            ).one()
    finally:
        engine.dispose()
    assert row.status == "failed"
    assert row.message.startswith("interrupted: the server shut down"), row.message
