"""Engine creation (SQLite pragmas, Postgres timeouts) and the mapping of driver errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, make_url

from ragchat.errors import ConfigError, Conflict, StoreUnavailable

SQLITE_BUSY_TIMEOUT_MS = 5000
# Execution option read by the SQLite ``begin`` hook: "IMMEDIATE" takes the write lock at BEGIN,
# so a read-then-write transaction never fails on a stale snapshot (SQLITE_BUSY_SNAPSHOT).
SQLITE_BEGIN = "ragchat_sqlite_begin"


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def create_store_engine(url: str, *, connect_timeout_s: int = 5) -> Engine:
    """An engine for ``url``: SQLite gets WAL, foreign keys and a busy timeout on every
    connection; Postgres a connect timeout and pre-ping."""
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError as exc:
        raise ConfigError(f"invalid database URL: {exc}") from exc
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = create_engine(parsed, json_serializer=_dumps)
            _configure_sqlite(engine)
            return engine
        connect_args: dict[str, Any] = {}
        if parsed.get_backend_name() == "postgresql":
            connect_args["connect_timeout"] = connect_timeout_s
        return create_engine(
            parsed, json_serializer=_dumps, pool_pre_ping=True, connect_args=connect_args
        )
    except ImportError as exc:
        raise ConfigError(
            f"no driver for {parsed.drivername}: install ragchat[postgres] ({exc})"
        ) from exc


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's ``begin`` hook issue BEGIN itself (pysqlite's implicit one is lazy).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(SQLITE_BEGIN, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


def write_engine(engine: Engine) -> Engine:
    """``engine`` with write transactions that lock up front on SQLite (no-op elsewhere)."""
    return engine.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})


@contextmanager
def translate_errors() -> Iterator[None]:
    """Driver errors become ragchat's: unreachable/locked → StoreUnavailable, integrity →
    Conflict."""
    try:
        yield
    except sa_exc.IntegrityError as exc:
        raise Conflict(f"conflicts with stored data: {exc.orig}") from exc
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError) as exc:
        raise StoreUnavailable(f"database unavailable: {_short(exc)}") from exc
    except sa_exc.DBAPIError as exc:
        if exc.connection_invalidated:
            raise StoreUnavailable(f"database connection lost: {_short(exc)}") from exc
        raise


def _short(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__


@contextmanager
def scratch_schema(url: str, prefix: str = "t") -> Iterator[str]:
    """A PostgreSQL URL whose tables live in a new schema of ``url``'s database, dropped with
    everything in it afterwards: tests and benchmarks get an empty store without touching the
    real tables (or needing the right to create databases)."""
    import uuid

    from sqlalchemy import text

    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
