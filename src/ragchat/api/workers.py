"""``ragchat serve --workers N``: N server processes on one port, one data directory.

The parent holds the data directory's lock (a second server still fails at once, exit 8) and
does the one-time start-up work before any worker exists, so the workers never race on it:
store migrations, failing the upload jobs and replies a previous crash left unfinished, the
cookie secret file, the embedder's ONNX export cache and the configured knowledge bases'
ingestion. Then uvicorn's supervisor spawns the workers (each builds the app through
``worker_app``) and restarts one that dies.

What lives where (docs/deployment.md, "Many workers on one machine"): users, sessions, API
keys, conversations and upload jobs are rows in the database, so any worker serves anyone;
a job runs in the worker that took the upload, which renews its lease (``leases.py``), and a
job whose worker died is marked interrupted by the others. Knowledge bases are shared files
(or Qdrant): a write takes the knowledge base's cross-process lock, and the other workers see
it on their next read (``vectorstores/registry.py``). Stream slots and the fair upload queue
stay per worker."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from ragchat.errors import ConfigError, IngestCancelled, RagchatError
from ragchat.settings import Settings, export_for_workers, settings_for_worker

log = logging.getLogger(__name__)

APP_FACTORY = "ragchat.api.workers:worker_app"


def check_many_workers(settings: Settings) -> None:
    """``ConfigError`` for what cannot be shared by several processes."""
    from ragchat.vectorstores.factory import vector_store

    reason = vector_store(settings).single_process()
    if reason is not None:
        raise ConfigError(
            f"--workers {settings.api.workers} cannot use {reason}, or serve with one worker"
        )


def worker_app() -> FastAPI:
    """The app factory each worker process calls (uvicorn ``factory=True``)."""
    from ragchat.api.app import create_app
    from ragchat.api.logging import configure_logging

    settings = settings_for_worker()
    configure_logging(settings)
    try:
        return create_app(settings, worker=True)
    except Exception:
        # uvicorn restarts a worker that raises here, forever; this exit code stops them all.
        log.exception("a server worker cannot build the application")
        sys.exit(STARTUP_FAILURE)


def prepare(settings: Settings, stopping: threading.Event) -> None:
    """The start-up work done once, before the workers (module docstring); a set
    ``stopping`` stops the knowledge bases' ingestion with nothing of it saved."""
    from ragchat import resources
    from ragchat.agents.bootstrap import ensure_knowledge_bases
    from ragchat.agents.config import load_config
    from ragchat.api.app import create_app
    from ragchat.api.services.documents import recover_jobs
    from ragchat.api.services.identity import cookie_secret
    from ragchat.api.stopping import stop_when
    from ragchat.runtime import prepare_runtime
    from ragchat.store import build_store

    create_app(settings, worker=True)  # a configuration error stops us here, not each worker
    prepare_runtime(settings)
    store = build_store(settings)  # migrations; replies a crash left streaming: interrupted
    try:
        recover_jobs(store, settings.api)
    finally:
        store.close()
    cookie_secret(settings)  # created once, read by every worker
    app_config = load_config(settings.config_file)
    if not settings.api.bootstrap_knowledge_bases:
        warm_onnx_export(settings)
        return
    embedder = resources.ingest_embedder(settings)  # exports to ONNX first if needed
    log.info("checking the configured knowledge bases (a fresh data directory ingests them)")
    for kb in ensure_knowledge_bases(settings, app_config, embedder, progress=stop_when(stopping)):
        if kb.changed:
            log.info("ingested knowledge base %s", kb.name)


def warm_onnx_export(settings: Settings) -> None:
    """The embedder's ONNX export, made once here rather than by every worker at once (each
    would spend a minute of CPU on the same file); a no-op when it is cached."""
    if settings.embedding.backend not in ("onnx", "onnx-int8"):
        return
    from ragchat.embed.models import resolve_model_path
    from ragchat.embed.onnx_export import ensure_export
    from ragchat.embed.onnx_model import default_cache_root

    ensure_export(
        resolve_model_path(settings.embedding.model),
        default_cache_root(settings),
        allow_downloads=settings.allow_downloads,
        threads=settings.embedding.threads,
    )


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, remembering whether it stopped on a signal (else a worker failed
    to start, and ``ragchat serve`` must not exit 0)."""

    signalled = False

    def handle_int(self) -> None:
        self.signalled = True
        super().handle_int()

    def handle_term(self) -> None:
        self.signalled = True
        super().handle_term()


def run_workers(settings: Settings, announce: str) -> None:
    """Blocks until SIGTERM/SIGINT (the workers drain and stop their uploads at the next safe
    point). The caller holds the data directory's lock."""
    check_many_workers(settings)
    stopping = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda s, f: _stop(stopping, s, f))
        for sig in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        prepare(settings, stopping)
    except IngestCancelled:
        log.warning("start-up stopped by a signal: the knowledge bases' ingestion was cancelled")
        return
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stopping.is_set():
        return
    export_for_workers(settings)
    config = uvicorn.Config(
        APP_FACTORY,
        factory=True,
        host=settings.api.host,
        port=settings.api.port,
        workers=settings.api.workers,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
        proxy_headers=False,  # the app trusts settings.api.trusted_proxies itself
    )
    supervisor = _Supervisor(config, sockets=[config.bind_socket()])
    threading.Thread(
        target=_announce_when_ready,
        args=(settings, announce, supervisor.should_exit),
        name="ragchat-banner",
        daemon=True,
    ).start()
    supervisor.run()
    if not supervisor.signalled:
        raise RagchatError("a server worker failed to start; the log above says why")


def _stop(stopping: threading.Event, sig: int, frame: FrameType | None) -> None:
    log.warning("signal %d during start-up: stopping", sig)
    stopping.set()


def _announce_when_ready(settings: Settings, message: str, stop: threading.Event) -> None:
    """Prints the banner once a worker answers (start-up loads models in each first)."""
    host = settings.api.host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url = f"http://{host}:{settings.api.port}/health"
    while not stop.wait(0.5):
        try:
            response: Any = httpx.get(url, timeout=5, trust_env=False)
        except httpx.HTTPError:
            continue
        if response.status_code == 200:
            print(message, flush=True)
            return
