"""Everything a request needs, built once by the lifespan and hung on ``app.state.ragchat``."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from ragchat.api.limits import FailoverRateLimiter, MemoryRateLimiter, RateLimits, StreamSlots
from ragchat.api.services.accounts import AccountService
from ragchat.api.services.chat import ChatService
from ragchat.api.services.documents import DocumentService
from ragchat.api.services.engine_loop import ThreadedEngine
from ragchat.api.services.health import HealthService
from ragchat.api.services.identity import CookieSigner
from ragchat.api.services.jobs import FairJobQueue
from ragchat.api.services.knowledge_bases import KnowledgeBaseCatalogue
from ragchat.api.services.openai import OpenAIAdapter
from ragchat.api.services.query import QueryService
from ragchat.api.services.sessions import SessionService
from ragchat.embed.base import Embedder
from ragchat.errors import ConfigError
from ragchat.ingestion.worker import build_ingester
from ragchat.settings import ApiSettings, Settings
from ragchat.store.base import RateLimiter, Store
from ragchat.store.memory import SqlMemoryStore
from ragchat.store.rate_limits import SqlRateLimiter
from ragchat.store.sql import SqlStore
from ragchat.tenancy.documents import DocumentAccess
from ragchat.vectorstores.registry import KnowledgeBaseRegistry


@dataclass
class AppState:
    settings: Settings
    store: Store
    engine: ThreadedEngine  # the engine on its own loop and thread
    embedder: Embedder
    registry: KnowledgeBaseRegistry
    memory: SqlMemoryStore
    signer: CookieSigner
    limits: RateLimits
    streams: StreamSlots
    executor: FairJobQueue  # upload jobs
    chat: ChatService
    documents: DocumentService
    sessions: SessionService
    query: QueryService
    health: HealthService
    openai: OpenAIAdapter
    kbs: KnowledgeBaseCatalogue
    accounts: AccountService

    @classmethod
    def build(
        cls,
        settings: Settings,
        store: Store,
        engine: ThreadedEngine,
        embedder: Embedder,
        access: DocumentAccess,
        memory: SqlMemoryStore,
        signer: CookieSigner,
    ) -> AppState:
        api = settings.api
        registry = access.registry
        per_ip = api.rate_limit_per_ip_per_minute
        executor = FairJobQueue(api.ingest_slots, per_address=api.ingest_slots_per_address)
        config = engine.app_config
        kbs = KnowledgeBaseCatalogue(
            store,
            access,
            {name: kb.description for name, kb in config.knowledge_bases.items()},
            [a.name for a in config.kb_agents()],
        )
        limits = RateLimits(
            api.rate_limit_per_minute,
            3 * api.rate_limit_per_minute if per_ip is None else per_ip,
            rate_limiter(api, store),
            new_users_per_ip=api.new_users_per_ip_per_minute,
            uploads_per_user=api.uploads_per_minute,
        )
        return cls(
            settings=settings,
            store=store,
            engine=engine,
            embedder=embedder,
            registry=registry,
            memory=memory,
            signer=signer,
            limits=limits,
            streams=StreamSlots(api.max_concurrent_streams),
            executor=executor,
            chat=ChatService(settings, store, engine, kbs),
            documents=DocumentService(
                settings, store, access, executor, build_ingester(settings, embedder)
            ),
            sessions=SessionService(store, memory, settings.memory),
            query=QueryService(engine, kbs.storage_for, kbs.visible_storages, kbs.name_of),
            health=HealthService(settings, store, engine, embedder, registry),
            openai=OpenAIAdapter(engine, settings.history_turns, kbs),
            kbs=kbs,
            accounts=AccountService(settings.auth, store, limits, secure_cookie=api.cookie_secure),
        )


def rate_limiter(api: ApiSettings, store: Store) -> RateLimiter:
    """Where the answer rate limits count, per ``api.rate_limit_store``: in the database when
    several workers serve (else each would allow the whole limit), else in memory."""
    kind = api.rate_limit_store
    if kind == "auto":
        kind = "database" if api.workers > 1 else "memory"
    if kind == "memory":
        return MemoryRateLimiter()
    if not isinstance(store, SqlStore):
        raise ConfigError("api.rate_limit_store=database needs the SQL store")
    return FailoverRateLimiter(SqlRateLimiter(store), MemoryRateLimiter())


def get_state(request: Request) -> AppState:
    state = getattr(request.app.state, "ragchat", None)  # Starlette's untyped state bag
    if not isinstance(state, AppState):  # only before the lifespan ran (a misconfigured client)
        raise RuntimeError("ragchat app state missing: was the lifespan started?")
    return state
