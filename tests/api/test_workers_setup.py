"""The pieces of ``ragchat serve --workers N`` that need no PostgreSQL: settings handed to
the workers, what is refused, and a worker's start-up (no lock, no recovery, leases)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from uvicorn.config import STARTUP_FAILURE

from ragchat.api import create_app
from ragchat.api.serve import serve
from ragchat.api.services.documents import INTERRUPTED_JOB_MESSAGE
from ragchat.api.services.leases import LEASE_JOB_MESSAGE
from ragchat.api.workers import worker_app
from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import ConfigError
from ragchat.settings import (
    WORKER_OVERRIDES_ENV,
    ApiSettings,
    Settings,
    VectorStoreSettings,
    export_for_workers,
    settings_for_worker,
)
from ragchat.store import build_store

from .fakes import FakeEngine
from .live_server import HOLD


def test_a_worker_rebuilds_the_parents_settings_without_secrets_in_the_handover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WORKER_OVERRIDES_ENV, "")  # restored (unset) after the test
    monkeypatch.setenv("RAGCHAT_LLM__API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("RAGCHAT_RETRIEVAL__ALPHA", "0.7")
    parent = Settings().model_copy(
        update={
            "data_dir": tmp_path / "data",
            "config_file": tmp_path / "agents.toml",
            "api": ApiSettings(host="0.0.0.0", port=8123, workers=3, cookie_secret=None),
        }
    )
    export_for_workers(parent)
    handover = os.environ[WORKER_OVERRIDES_ENV]
    assert "sk-from" not in handover and json.loads(handover)["api"]["workers"] == 3

    worker = settings_for_worker()

    assert worker.data_dir == tmp_path / "data"
    assert worker.config_file == tmp_path / "agents.toml"
    assert (worker.api.host, worker.api.port, worker.api.workers) == ("0.0.0.0", 8123, 3)
    assert worker.retrieval.alpha == 0.7  # the rest comes from the inherited environment
    assert worker.llm.api_key == SecretStr("sk-from-the-environment")


def test_without_a_handover_a_worker_reads_the_environment_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WORKER_OVERRIDES_ENV, raising=False)
    monkeypatch.setenv("RAGCHAT_API__PORT", "8765")
    assert settings_for_worker().api.port == 8765


def test_qdrant_local_mode_is_refused_before_anything_is_touched(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data", vector_store=VectorStoreSettings(backend="qdrant")
    )
    with pytest.raises(ConfigError, match="local mode"):
        serve(settings, workers=2)
    assert not (tmp_path / "data").exists()


def test_a_worker_starts_beside_the_lock_and_expires_only_dead_jobs(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        api=ApiSettings(workers=2, lease_s=1.0, ingest_runner="thread"),
    )
    settings.data_dir.mkdir()
    store = build_store(settings)
    store.ensure_user("ann")
    orphan = store.update_job(store.create_job("ann", "notes").id, status="running")
    store.close()
    holder = subprocess.Popen(  # the parent process of the workers holds the lock
        [sys.executable, "-c", HOLD, str(settings.data_dir)], stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder(), worker=True)
        with TestClient(app) as client:
            state = app.state.ragchat
            # Not failed at start-up: a sibling worker may be running it.
            assert state.store.get_job("ann", orphan.id).status == "running"
            assert client.get("/health").headers["x-ragchat-worker"] == str(os.getpid())
            deadline = time.monotonic() + 10
            while (job := state.store.get_job("ann", orphan.id)).status == "running":
                assert time.monotonic() < deadline, "the dead worker's job never expired"
                time.sleep(0.1)
        assert (job.status, job.message, job.result) == (
            "failed",
            LEASE_JOB_MESSAGE,
            {"interrupted": True},
        )
        assert job.message != INTERRUPTED_JOB_MESSAGE
    finally:
        holder.kill()
        holder.wait()


def test_a_worker_that_cannot_build_the_app_exits_so_that_uvicorn_stops_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WORKER_OVERRIDES_ENV, raising=False)
    monkeypatch.setenv("RAGCHAT_API__CORS_ORIGINS", '["*"]')
    with pytest.raises(SystemExit) as exited:
        worker_app()
    assert exited.value.code == STARTUP_FAILURE  # any other code: restarted forever
