"""``build_store(settings)``: engine, migrations, crash recovery — ready for the API."""

from __future__ import annotations

import logging
from datetime import timedelta

from ragchat.settings import Settings
from ragchat.store._core import Clock, utcnow
from ragchat.store.base import Store
from ragchat.store.database import create_store_engine
from ragchat.store.migrations import MIGRATIONS, Migration, migrate
from ragchat.store.sql import SqlStore

log = logging.getLogger(__name__)

SQLITE_FILE = "ragchat.sqlite3"


def database_url(settings: Settings) -> str:
    """The configured URL, or the SQLite file under ``data_dir`` (its folder is created)."""
    if settings.database_url:
        return settings.database_url
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(settings.data_dir / SQLITE_FILE).resolve()}"


def build_store(
    settings: Settings,
    *,
    clock: Clock = utcnow,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    recover: bool = True,
) -> SqlStore:
    """Connects, migrates the schema and marks messages left "streaming" by a crash as
    "interrupted" (not with ``recover`` off: a worker of a many-worker server, whose siblings
    are streaming; only those whose lease ran out with ``api.recovery = "expired"``). Raises
    ``StoreUnavailable`` when the database cannot be reached."""
    engine = create_store_engine(
        database_url(settings), connect_timeout_s=settings.database_connect_timeout_s
    )
    try:
        applied = migrate(engine, migrations)
        if applied:
            log.info("store schema migrated to v%d", applied[-1])
        store = SqlStore(
            engine, session_ttl=timedelta(minutes=settings.session_ttl_minutes), clock=clock
        )
        recovered = 0
        if recover and settings.api.recovery == "expired":  # the others' replies are alive
            recovered = store.expire_streaming(timedelta(seconds=settings.api.lease_s))
        elif recover:
            recovered = store.recover_interrupted()
    except BaseException:
        engine.dispose()
        raise
    if recovered:
        log.warning("marked %d half-written assistant message(s) as interrupted", recovered)
    return store


def _conforms(store: SqlStore) -> Store:
    return store  # mypy checks that SqlStore implements the whole Store protocol
