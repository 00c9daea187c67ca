"""``create_app``: the FastAPI application and its lifespan.

Start-up (in a worker thread, it blocks): the store (migrations, crash recovery: replies left
half-written become "interrupted", upload jobs left unfinished "failed"), the embedder, the
configured knowledge bases' sources ingested (the bundled samples on a fresh data directory, a
cheap hash check afterwards), the engine wired to the shared knowledge-base registry and the
persistent memory, and a periodic cleaner of idle sessions. Tests inject any of these. The
data directory's lock (``api/datadir.py``) is held from before start-up to after shutdown (by
the parent process instead, for a worker of ``serve --workers N``: ``api/workers.py``).

Shutdown: the running upload job stops at its next safe point and is marked interrupted
(nothing of it saved), queued ones too; then the engine and the stores close."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from ragchat import __version__
from ragchat.agents.config import AppConfig, load_config
from ragchat.api.datadir import hold_data_dir
from ragchat.api.docs import install_docs
from ragchat.api.errors import install_error_handlers
from ragchat.api.middleware import (
    BodyLimitMiddleware,
    HeadAsGetMiddleware,
    RequestContextMiddleware,
)
from ragchat.api.routes import (
    auth,
    chat,
    compat,
    conversations,
    documents,
    health,
    knowledge_bases,
    openai_compat,
    query,
    ui,
    users,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.engine_loop import Engine, ThreadedEngine
from ragchat.api.services.identity import CookieSigner, cookie_secret
from ragchat.api.services.leases import keep_leases
from ragchat.api.state import AppState
from ragchat.api.stopping import cancel_on_signal, stop_when
from ragchat.embed.base import Embedder
from ragchat.errors import ConfigError, IngestCancelled
from ragchat.llm.base import ChatModel
from ragchat.settings import Settings
from ragchat.store.base import Store
from ragchat.store.memory import SqlMemoryStore
from ragchat.tenancy.documents import DocumentAccess, uploads_dir
from ragchat.vectorstores.registry import KnowledgeBaseRegistry

log = logging.getLogger(__name__)
UPLOAD_PATH = re.compile(r"^/kb/[^/]+/documents/?$")
DESCRIPTION = """Self-hosted, multi-agent, conversational RAG chat.

Identity: a signed cookie (browsers) or an API key (`Authorization: Bearer rc_…` or
`X-API-Key`). Errors are `{"error": {"type", "message", "request_id"}}`. The answer endpoints
are rate limited (429 + Retry-After). `/v1` speaks the OpenAI Chat Completions protocol."""


@dataclass
class Injected:
    """What a caller (tests, embedding applications) provides instead of the defaults."""

    engine: Engine | None = None
    store: Store | None = None
    embedder: Embedder | None = None
    chat_model: ChatModel | None = None
    app_config: AppConfig | None = None
    bootstrap: bool | None = None
    # One of ``serve --workers N``'s processes: the parent holds the data directory's lock and
    # did the one-time start-up work (recovery, bootstrap ingestion); ``api/workers.py``.
    worker: bool = False


def _build_state(
    settings: Settings, given: Injected, stopping: threading.Event | None = None
) -> AppState:
    """Everything blocking at start-up; a ``ConfigError``/``StoreUnavailable`` stops start-up
    with its message. The engine is built last, from parts that are complete: the knowledge
    base registry it opens KBs through (uploads are searchable at once) and the document
    access rules it filters retrieval with (private uploads stay private)."""
    from ragchat import resources
    from ragchat.agents.bootstrap import ensure_knowledge_bases
    from ragchat.agents.factory import build_engine
    from ragchat.llm.factory import build_chat_model
    from ragchat.runtime import prepare_runtime
    from ragchat.store import build_store

    prepare_runtime(settings)
    if settings.crash_at:
        from ragchat.crashpoints import arm

        arm(settings.crash_at)
    store = (
        given.store if given.store is not None else build_store(settings, recover=not given.worker)
    )
    engine = given.engine
    app_config = given.app_config or (
        engine.app_config if engine is not None else load_config(settings.config_file)
    )
    embedder = (
        resources.fast(given.embedder, settings)  # one fast path shared with the engine
        if given.embedder is not None
        else engine.embedder
        if engine is not None
        else resources.embedder(settings)
    )
    bootstrap = given.bootstrap
    if bootstrap is None:
        bootstrap = engine is None and settings.api.bootstrap_knowledge_bases
    bootstrap = bootstrap and not given.worker
    if bootstrap:
        log.info("checking the configured knowledge bases (a fresh data directory ingests them)")
        # Documents through the ingestion backend, unless the embedder is a caller's own.
        own = given.embedder is None and engine is None
        writer = resources.ingest_embedder(settings, embedder) if own else embedder
        for kb in ensure_knowledge_bases(
            settings, app_config, writer, progress=stop_when(stopping or threading.Event())
        ):
            if kb.changed:
                r = kb.report
                log.info(
                    "ingested knowledge base %s: %d file(s), %d chunks, %d error(s)",
                    kb.name,
                    r.added_files + r.replaced_files,
                    r.children,
                    len(r.errors),
                )
    registry = KnowledgeBaseRegistry(
        settings.kb_root, embedder, chunking=settings.chunking.model_dump(), settings=settings
    )
    access = DocumentAccess(uploads_dir(settings), registry, store)
    memory = SqlMemoryStore.from_settings(store, embedder, settings.memory)
    if engine is None:
        engine = build_engine(
            settings,
            app_config,
            embedder=embedder,
            chat_model=given.chat_model or build_chat_model(settings),
            memory=memory,
            kb_opener=registry.open,
            visibility=access,
        )
    else:
        log.warning(
            "an injected engine searches the knowledge bases it was built with: build it with "
            "kb_opener and visibility to see uploads and keep them private"
        )
    signer = CookieSigner(cookie_secret(settings), secure=settings.api.cookie_secure)
    state = AppState.build(
        settings, store, ThreadedEngine(engine), embedder, access, memory, signer
    )
    # An injected store is its owner's to recover (and to close); a worker's siblings are
    # running jobs, and dead workers' jobs expire with their leases.
    if given.store is None and not given.worker:
        state.documents.fail_interrupted_jobs()
    return state


def _start_prewarm(settings: Settings, engine: object) -> threading.Event | None:
    """Sentence vectors in the background (``agents/shared/prewarm.py``) for an engine built
    here or injected; None when off or not a ``ChatEngine``."""
    from ragchat.agents.engine import ChatEngine
    from ragchat.agents.shared.prewarm import start_prewarm

    if not settings.embedding.prewarm_sentences or not isinstance(engine, ChatEngine):
        return None
    return start_prewarm(engine)


def create_app(
    settings: Settings | None = None,
    *,
    engine: Engine | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    chat_model: ChatModel | None = None,
    app_config: AppConfig | None = None,
    bootstrap: bool | None = None,
    worker: bool = False,
) -> FastAPI:
    """The application. ``bootstrap`` (ingest configured KB sources at start-up) defaults to
    ``settings.api.bootstrap_knowledge_bases`` when the engine is built here, off when one is
    injected. An injected store is its owner's: its unfinished upload jobs are left alone (it
    may serve another app's) and it is not closed at shutdown. ``worker``: one process of
    ``ragchat serve --workers N`` (``api/workers.py``): no data-directory lock, no start-up
    recovery nor bootstrap (the parent did them), upload-job leases kept."""
    settings = settings or Settings()
    api = settings.api
    if any(o.strip() == "*" for o in api.cors_origins):
        raise ConfigError("api.cors_origins must list explicit origins, not '*'")
    given = Injected(engine, store, embedder, chat_model, app_config, bootstrap, worker)
    stopping = threading.Event()  # set by ``cancel_ingestion``

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Before anything in it is touched; a worker's parent holds it for all of them.
        with nullcontext() if worker else hold_data_dir(settings.data_dir):
            try:
                state = await run_sync(_build_state, settings, given, stopping)
            except IngestCancelled:
                log.warning(
                    "start-up stopped by a signal: the knowledge bases' ingestion under "
                    "way was cancelled, nothing of it saved (it resumes at the next start)"
                )
                raise
            app.state.ragchat = state
            prewarm = _start_prewarm(settings, state.engine.engine)
            cleaner = asyncio.create_task(
                state.sessions.run_periodically(
                    api.session_cleanup_interval_s, also=state.accounts.expire
                )
            )
            leases = None
            if worker or api.keeps_leases:
                leases = asyncio.create_task(
                    keep_leases(state.documents, state.store, api.lease_s, state.chat)
                )
            if worker:
                cancel_on_signal(app)
            log.info(
                "ragchat %s ready (agents: %s)",
                __version__,
                ", ".join(sorted(state.engine.agents)),
            )
            try:
                yield
            finally:
                cleaner.cancel()
                if prewarm is not None:
                    prewarm.set()
                with suppress(asyncio.CancelledError):
                    await cleaner
                if leases is not None:
                    leases.cancel()
                    with suppress(asyncio.CancelledError):
                        await leases
                # The running upload stops at its next safe point with nothing saved (a
                # service manager kills a server that takes too long: a crash mid-write).
                await run_sync(state.documents.shutdown)
                await state.engine.aclose()
                state.registry.close()
                if store is None:
                    state.store.close()

    def limit_for(path: str) -> int:
        return api.upload_max_bytes if UPLOAD_PATH.match(path) else api.max_body_bytes

    # Outermost: the real client address (behind a trusted proxy) for logs and rate limits.
    middleware = [
        Middleware(ProxyHeadersMiddleware, trusted_hosts=list(api.trusted_proxies)),
        Middleware(RequestContextMiddleware, worker=worker),
    ]
    if api.cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(api.cors_origins),
                allow_credentials=True,
                allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
                allow_headers=["Authorization", "Content-Type", "X-API-Key", "X-Request-ID"],
                expose_headers=["X-Request-ID", "Retry-After"],
            )
        )
    middleware.append(Middleware(BodyLimitMiddleware, limit_for=limit_for))
    middleware.append(Middleware(HeadAsGetMiddleware))
    app = FastAPI(
        title="ragchat",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        middleware=middleware,
        docs_url=None,  # FastAPI's pages load from a CDN: ours are served offline
        redoc_url=None,
    )
    app.state.stopping = stopping
    install_error_handlers(app)
    install_docs(app)
    routers = (
        health,
        auth,
        users,
        chat,
        conversations,
        knowledge_bases,
        documents,
        query,
        compat,
        openai_compat,
        ui,
    )
    for module in routers:
        app.include_router(module.router)
    if Path(ui.STATIC_DIR).is_dir():
        app.mount("/static", StaticFiles(directory=ui.STATIC_DIR), name="static")
    return app
