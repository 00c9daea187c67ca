"""Shared plumbing of the pgvector backend: one connection pool per database and process, the
schema, error mapping, and ragchat's search filters as SQL.

Layout (schema ``vector_store.pg_schema``): ``kbs`` holds one row per knowledge base (its
manifest, a revision, and the BM25 collection statistics: searchable chunks and their total
length); ``documents`` and ``files`` are its catalogue. Each knowledge base has two tables of its
own, named by its id so any name is safe: ``kb<id>_chunks`` (children with a ``vector(dim)`` and
an HNSW index, parents without a vector) and ``kb<id>_terms`` (the inverted index: one row per
distinct term of a child, with its count and the child's length, tokenised by ragchat's own
BM25 tokenizer; the primary key covers them, so a term's postings are one index range).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragchat.errors import ConfigError, VectorStoreUnavailable
from ragchat.settings import Settings
from ragchat.types import Exclude
from ragchat.vectorstores.filters import as_text, check_key, values_of
from ragchat.vectorstores.unavailable import guard

log = logging.getLogger(__name__)

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - the extra is missing
    psycopg = None  # type: ignore[assignment]
    ConnectionPool = None  # type: ignore[assignment,misc]

_pools: dict[tuple[int, str, str], Any] = {}
_pools_lock = threading.Lock()

CATALOGUE_DDL = """
CREATE TABLE IF NOT EXISTS kbs (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    manifest jsonb NOT NULL,
    revision bigint NOT NULL DEFAULT 0,
    n_children bigint NOT NULL DEFAULT 0,
    total_len bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS documents (
    kb bigint NOT NULL REFERENCES kbs ON DELETE CASCADE,
    doc_id text NOT NULL,
    source text NOT NULL,
    kind text NOT NULL,
    title text NOT NULL,
    file_path text,
    n_children integer NOT NULL,
    n_sections integer NOT NULL,
    metadata jsonb NOT NULL,
    added_at text NOT NULL,
    PRIMARY KEY (kb, doc_id)
);
CREATE INDEX IF NOT EXISTS documents_file ON documents (kb, file_path);
CREATE TABLE IF NOT EXISTS files (
    kb bigint NOT NULL REFERENCES kbs ON DELETE CASCADE,
    path text NOT NULL,
    sha256 text NOT NULL,
    ingested_at text NOT NULL,
    PRIMARY KEY (kb, path)
);
CREATE INDEX IF NOT EXISTS files_sha ON files (kb, sha256);
"""


def kb_tables(kb_id: int) -> tuple[str, str]:
    return f"kb{int(kb_id)}_chunks", f"kb{int(kb_id)}_terms"


def hnsw_ddl(kb_id: int, m: int, ef_construction: int) -> str:
    chunks, _ = kb_tables(kb_id)
    return (
        f"CREATE INDEX {chunks}_hnsw ON {chunks} USING hnsw (embedding vector_ip_ops) "
        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
    )


def kb_ddl(kb_id: int, dim: int, m: int, ef_construction: int, *, hnsw: bool = True) -> str:
    """The knowledge base's tables; ``hnsw`` False leaves the vector index out (a bulk load
    builds it once at the end: ``hnsw_ddl``)."""
    chunks, terms = kb_tables(kb_id)
    index = f"{hnsw_ddl(kb_id, m, ef_construction)};" if hnsw else ""
    return f"""
CREATE TABLE {chunks} (
    row_id bigserial PRIMARY KEY,
    chunk_id text NOT NULL UNIQUE,
    doc_id text NOT NULL,
    position integer NOT NULL,
    parent_id text,
    is_parent boolean NOT NULL,
    text text NOT NULL,
    metadata jsonb NOT NULL,
    f jsonb NOT NULL,
    length integer,
    embedding vector({int(dim)})
);
CREATE INDEX {chunks}_doc ON {chunks} (doc_id, position);
{index}
CREATE TABLE {terms} (
    term text NOT NULL,
    row_id bigint NOT NULL REFERENCES {chunks} ON DELETE CASCADE,
    tf integer NOT NULL,
    dl integer NOT NULL,
    PRIMARY KEY (term, row_id) INCLUDE (tf, dl)
);
CREATE INDEX {terms}_row ON {terms} (row_id);
"""


def database_url(settings: Settings) -> str:
    """A libpq URL (SQLAlchemy's ``postgresql+psycopg://`` accepted too)."""
    url = settings.pgvector_url
    if not url:
        raise ConfigError(
            "the pgvector store needs a PostgreSQL URL: set RAGCHAT_VECTOR_STORE__URL or "
            "RAGCHAT_DATABASE_URL (postgresql://user:password@host:5432/db)"
        )
    scheme, sep, rest = url.partition("://")
    return f"postgresql://{rest}" if sep and scheme.startswith("postgres") else url


def _configure(schema: str, ef_search: int) -> Callable[[Any], None]:
    def configure(conn: Any) -> None:
        from pgvector.psycopg import register_vector

        conn.autocommit = True
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        conn.execute(f"SET search_path = {schema}, public")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        # Filtered searches walk on until k rows pass the filter, in exact distance order.
        conn.execute(f"SET hnsw.ef_search = {int(ef_search)}")
        conn.execute("SET hnsw.iterative_scan = strict_order")
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"ragchat:{schema}"])
            conn.execute(CATALOGUE_DDL)

    return configure


def pool(settings: Settings) -> Any:
    """This process's pool for the configured database and schema (a forked worker makes its
    own: connections are never shared across processes)."""
    if ConnectionPool is None:
        raise VectorStoreUnavailable(
            "the pgvector vector store needs psycopg and pgvector: pip install 'ragchat[pgvector]'"
        )
    vs = settings.vector_store
    url = database_url(settings)
    key = (os.getpid(), url, vs.pg_schema)
    with _pools_lock:
        found = _pools.get(key)
        if found is None:
            timeout = max(1, int(settings.database_connect_timeout_s))
            try:  # a wrong password or host fails now, with its own message, not after retries
                psycopg.connect(url, connect_timeout=timeout).close()
            except psycopg.OperationalError as exc:
                raise VectorStoreUnavailable(
                    f"cannot reach PostgreSQL for pgvector: {exc}"
                ) from exc
            found = ConnectionPool(
                url,
                min_size=1,
                max_size=vs.pool_size,
                timeout=vs.timeout_s,
                kwargs={"connect_timeout": timeout},
                configure=_configure(vs.pg_schema, vs.hnsw_ef_search),
                name=f"ragchat-pgvector-{vs.pg_schema}",
                open=False,
            )
            try:
                found.open(wait=True, timeout=vs.timeout_s)
            except Exception as exc:
                found.close()
                raise VectorStoreUnavailable(
                    f"cannot reach PostgreSQL for pgvector: {exc}"
                ) from exc
            _pools[key] = found
        return found


def release(settings: Settings) -> None:
    """Closes this process's pool of the configured store (tests)."""
    key = (os.getpid(), database_url(settings), settings.vector_store.pg_schema)
    with _pools_lock:
        found = _pools.pop(key, None)
    if found is not None:
        found.close()


def _unreachable(exc: Exception) -> str | None:
    """Lost connections and an unreachable server (``guarded``)."""
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        return f"PostgreSQL request failed: {exc}"
    if type(exc).__name__ == "PoolTimeout":
        return f"no PostgreSQL connection free: {exc}"
    return None


guarded = guard(_unreachable)  # a pgvector call: ``VectorStoreUnavailable`` (503) when out of reach


# -- chunks and filters ------------------------------------------------------------------------
def where_filters(filters: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """SQL conditions on a chunks table aliased ``c`` (and their parameters) for resolved
    filters: a value or list of values to include, ``Exclude`` to leave out."""
    conds: list[str] = []
    params: list[Any] = []
    for key, value in sorted(filters.items()):
        check_key(key)
        field = "c.doc_id" if key == "doc_id" else "(c.f ->> %s)"
        key_params = [] if key == "doc_id" else [key]
        if isinstance(value, Exclude):
            if value.values:
                conds.append(f"NOT coalesce({field} = ANY(%s), false)")
                params += [*key_params, [as_text(v) for v in value.values]]
            continue
        conds.append(f"{field} = ANY(%s)")
        params += [*key_params, [as_text(v) for v in values_of(value)]]
    return conds, params


class Session:
    """A knowledge base's connections: reads borrow one from the pool (autocommit: they see
    every committed write, whoever made it); the first change opens one transaction on a
    connection of its own, and every read and write of this instance uses it until ``commit``
    (``save``) or ``rollback`` (``close``). A process killed in between leaves nothing: the
    server rolls the transaction back when the connection drops."""

    def __init__(self, pool: Any, begin: Callable[[Any], None]) -> None:
        self._pool = pool
        self._begin = begin  # run first in a new transaction (locks the knowledge base's row)
        self._conn: Any = None
        self._lock = threading.RLock()

    @property
    def in_transaction(self) -> bool:
        return self._conn is not None

    @contextmanager
    def read(self) -> Iterator[Any]:
        with self._lock:
            if self._conn is not None:
                yield self._conn
                return
        with self._pool.connection() as conn:
            yield conn

    def adopt(self, conn: Any) -> None:
        """Takes over ``conn``, in a transaction already begun (and its row locked) by the
        caller, as this session's write."""
        with self._lock:
            if self._conn is not None:
                raise RuntimeError("a write is already in progress")
            self._conn = conn

    @contextmanager
    def write(self) -> Iterator[Any]:
        with self._lock:
            if self._conn is None:
                conn = self._pool.getconn()
                try:
                    conn.execute("BEGIN")
                    self._begin(conn)
                except BaseException:
                    self._put(conn, rollback=True)
                    raise
                self._conn = conn
            yield self._conn

    def commit(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    conn.execute("COMMIT")
                finally:
                    self._put(conn, rollback=False)

    def rollback(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                self._put(conn, rollback=True)

    def _put(self, conn: Any, *, rollback: bool) -> None:
        if rollback and not conn.closed:
            try:
                conn.execute("ROLLBACK")
            except Exception:  # a broken connection: the pool discards it
                log.debug("rollback on a broken connection", exc_info=True)
        self._pool.putconn(conn)


def drop_schema(settings: Settings) -> None:
    """Deletes every knowledge base of the configured schema, and the schema (tests and
    benchmarks use a scratch schema each)."""
    release(settings)
    with psycopg.connect(database_url(settings), autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {settings.vector_store.pg_schema} CASCADE")
