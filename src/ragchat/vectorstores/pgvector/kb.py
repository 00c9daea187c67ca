"""``PgVectorKB``: a knowledge base in PostgreSQL with pgvector, behind the same contracts as the
embedded ``KnowledgeBase`` (``SearchableKB``, ``ListsChildren``, ``KeepsVectors``,
``WritableKB``). Every app server reads the same tables, so any number of them can serve one
set of knowledge bases.

A write is one transaction, from the instance's first change to ``save`` (``close`` without it
rolls back): chunks, their vectors and term counts, the BM25 statistics, document and file rows
and the manifest commit together or not at all. The first change locks the knowledge base's
row, so writers on any machine take turns and each builds on the last commit. Layout:
``pg_conn.py``; reading: ``pg_read.py`` (SQL in ``pg_search.py``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg.types.json import Jsonb

from ragchat.crashpoints import crashpoint
from ragchat.embed.base import Embedder, Matrix
from ragchat.errors import IndexStateError, KnowledgeBaseNotFound
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow, children_and_vectors
from ragchat.vectorstores.manifest import Manifest, check_embedder, now_iso
from ragchat.vectorstores.names import validate_name
from ragchat.vectorstores.pgvector import search as pg_search
from ragchat.vectorstores.pgvector import write as pg_write
from ragchat.vectorstores.pgvector.catalogue import PgCatalogue
from ragchat.vectorstores.pgvector.conn import Session, guarded, hnsw_ddl, kb_ddl, kb_tables, pool
from ragchat.vectorstores.pgvector.read import PgReads

log = logging.getLogger(__name__)


def _kb_row(conn: Any, name: str) -> tuple[int, Manifest, int]:
    row = conn.execute(
        "SELECT id, manifest, revision FROM kbs WHERE name = %s", [validate_name(name)]
    ).fetchone()
    if row is None:
        raise KnowledgeBaseNotFound(f"no knowledge base named {name!r} in PostgreSQL")
    return int(row[0]), Manifest.model_validate(row[1]), int(row[2])


def _new_manifest(name: str, embedder: Embedder, chunking: Mapping[str, Any] | None) -> Manifest:
    validate_name(name)
    return Manifest(
        name=name,
        embedding_model=embedder.model_name,
        dim=embedder.dim,
        dense_backend="pgvector",
        chunking=dict(chunking or {}),
        created=now_iso(),
        updated=now_iso(),
    )


def _insert_kb(conn: Any, manifest: Manifest) -> int:
    row = conn.execute(
        "INSERT INTO kbs (name, manifest) VALUES (%s, %s) "
        "ON CONFLICT (name) DO NOTHING RETURNING id",
        [manifest.name, Jsonb(manifest.model_dump())],
    ).fetchone()
    if row is None:
        raise IndexStateError(f"knowledge base {manifest.name!r} already exists")
    return int(row[0])


class PgVectorKB(PgReads):
    def __init__(self, settings: Settings, kb_id: int, manifest: Manifest, embedder: Embedder):
        self.settings = settings
        self._index_pending = False  # create_staged: the HNSW index is built by save
        self.name = manifest.name
        self.manifest = manifest
        self.embedder = embedder
        self.kb_id = kb_id
        self._chunks, self._terms = kb_tables(kb_id)
        self._session = Session(pool(settings), self._lock_row)
        self.catalogue = PgCatalogue(self._session, kb_id)

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    @guarded
    def create(
        cls,
        settings: Settings,
        name: str,
        embedder: Embedder,
        *,
        chunking: Mapping[str, Any] | None = None,
    ) -> PgVectorKB:
        manifest = _new_manifest(name, embedder, chunking)
        vs = settings.vector_store
        with pool(settings).connection() as conn, conn.transaction():
            kb_id = _insert_kb(conn, manifest)
            conn.execute(kb_ddl(kb_id, embedder.dim, vs.hnsw_m, vs.hnsw_ef_construction))
        return cls(settings, kb_id, manifest, embedder)

    @classmethod
    @guarded
    def create_staged(
        cls,
        settings: Settings,
        name: str,
        embedder: Embedder,
        *,
        chunking: Mapping[str, Any] | None = None,
    ) -> PgVectorKB:
        """A new knowledge base written in one transaction that ``save`` commits, the HNSW
        index built once just before (a graph grown row by row over 100k chunks took 30x
        longer: docs/benchmarks.md). Nobody sees it until then; ``close``, a kill or a lost
        connection before leave nothing, not even its name."""
        manifest = _new_manifest(name, embedder, chunking)
        vs = settings.vector_store
        conn = pool(settings).getconn()
        try:
            conn.execute("BEGIN")
            kb_id = _insert_kb(conn, manifest)
            conn.execute(
                kb_ddl(kb_id, embedder.dim, vs.hnsw_m, vs.hnsw_ef_construction, hnsw=False)
            )
        except BaseException:
            if not conn.closed:
                conn.execute("ROLLBACK")
            pool(settings).putconn(conn)
            raise
        kb = cls(settings, kb_id, manifest, embedder)
        kb._session.adopt(conn)
        kb._index_pending = True
        return kb

    @classmethod
    @guarded
    def open(
        cls, settings: Settings, name: str, embedder: Embedder, *, strict_model: bool = True
    ) -> PgVectorKB:
        with pool(settings).connection() as conn:
            kb_id, manifest, _ = _kb_row(conn, name)
        check_embedder(manifest, name, embedder, strict=strict_model)
        return cls(settings, kb_id, manifest, embedder)

    @staticmethod
    @guarded
    def read_manifest(settings: Settings, name: str) -> Manifest:
        with pool(settings).connection() as conn:
            return _kb_row(conn, name)[1]

    @staticmethod
    @guarded
    def names(settings: Settings) -> list[str]:
        with pool(settings).connection() as conn:
            return [r[0] for r in conn.execute("SELECT name FROM kbs ORDER BY name").fetchall()]

    @staticmethod
    @guarded
    def delete(settings: Settings, name: str) -> None:
        """Drops the tables and rows in one transaction (waits for a write in progress)."""
        with pool(settings).connection() as conn, conn.transaction():
            kb_id, _, _ = _kb_row(conn, name)
            conn.execute("SELECT 1 FROM kbs WHERE id = %s FOR UPDATE", [kb_id])
            chunks, terms = kb_tables(kb_id)
            conn.execute(f"DROP TABLE IF EXISTS {terms}, {chunks}")
            conn.execute("DELETE FROM kbs WHERE id = %s", [kb_id])

    @staticmethod
    @guarded
    def size_on_disk(settings: Settings, name: str) -> int:
        with pool(settings).connection() as conn:
            kb_id, _, _ = _kb_row(conn, name)
            chunks, terms = kb_tables(kb_id)
            sql = "SELECT pg_total_relation_size(%s) + pg_total_relation_size(%s)"
            return int(conn.execute(sql, [chunks, terms]).fetchone()[0])

    def stale(self) -> bool:
        """Never: every read asks the store, which other processes write to directly."""
        return False

    def close(self) -> None:
        """A write not committed by ``save`` is rolled back."""
        if self._session.in_transaction:
            log.info("knowledge base %s: uncommitted changes discarded", self.name)
        self._session.rollback()

    def _lock_row(self, conn: Any) -> None:
        """First statement of a write: waits for any other writer of this knowledge base (on
        any machine) to commit, and fails if the knowledge base was deleted meanwhile."""
        row = conn.execute("SELECT 1 FROM kbs WHERE id = %s FOR UPDATE", [self.kb_id]).fetchone()
        if row is None:
            raise KnowledgeBaseNotFound(f"knowledge base {self.name!r} was deleted")

    @guarded
    def save(self) -> None:
        """Commits the write in progress with the manifest's counts re-derived from it."""
        m = self.manifest
        if self._index_pending:
            self._build_index()
        with self._session.write() as conn:
            m.children, m.parents = self._counts(conn)
            m.documents = self.catalogue.document_count()
            m.files = len(self.catalogue.files())
            m.updated = now_iso()
            row = conn.execute(
                "UPDATE kbs SET revision = revision + 1 WHERE id = %s RETURNING revision",
                [self.kb_id],
            ).fetchone()
            m.revision = int(row[0])
            conn.execute(
                "UPDATE kbs SET manifest = %s WHERE id = %s", [Jsonb(m.model_dump()), self.kb_id]
            )
            crashpoint("pg.before_commit")
        self._session.commit()

    def _build_index(self) -> None:
        """The HNSW index over everything loaded, in the write's transaction, with the
        memory to hold the whole graph; then planner statistics. The rows were COPied
        frozen (``copy_chunks``): their pages are all-visible from the commit on, so BM25's
        index-only scans never visit the table (without it, until autovacuum came round,
        BM25 p95 at 100k was 170 ms instead of 30: docs/benchmarks.md)."""
        vs = self.settings.vector_store
        with self._session.write() as conn:
            conn.execute(f"SET LOCAL maintenance_work_mem = '{int(vs.hnsw_build_mib)}MB'")
            conn.execute(hnsw_ddl(self.kb_id, vs.hnsw_m, vs.hnsw_ef_construction))
            conn.execute(f"ANALYZE {self._chunks}, {self._terms}")
        self._index_pending = False
        crashpoint("pg.index_built")

    # -- writing -----------------------------------------------------------------------------
    @guarded
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: Matrix | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> int:
        """Writes chunks by id: writing a chunk again replaces it."""
        children, vectors = children_and_vectors(chunks, vectors, self.embedder, progress=progress)
        stats = pg_search.term_counts([c.text for c in children])
        with self._session.write() as conn:
            self._drop_rows(conn, "chunk_id = ANY(%s)", [[c.chunk_id for c in chunks]])
            pg_write.copy_chunks(
                conn,
                self._chunks,
                self._terms,
                chunks,
                children,
                vectors,
                stats,
                freeze=self._index_pending,
            )
            conn.execute(
                "UPDATE kbs SET n_children = n_children + %s, total_len = total_len + %s "
                "WHERE id = %s",
                [len(children), sum(n for _, n in stats), self.kb_id],
            )
        crashpoint("pg.chunks_written")
        if save:
            self.save()
        return len(children)

    def _drop_rows(self, conn: Any, where: str, params: Sequence[Any]) -> int:
        """Deletes chunks (their terms cascade) and takes them out of the BM25 statistics;
        returns how many were children."""
        row = conn.execute(
            f"WITH gone AS (DELETE FROM {self._chunks} WHERE {where} "
            "RETURNING is_parent, coalesce(length, 0) AS length) "
            "SELECT count(*) FILTER (WHERE NOT is_parent), "
            "coalesce(sum(length) FILTER (WHERE NOT is_parent), 0) FROM gone",
            list(params),
        ).fetchone()
        children, length = int(row[0]), int(row[1])
        if children:
            conn.execute(
                "UPDATE kbs SET n_children = n_children - %s, total_len = total_len - %s "
                "WHERE id = %s",
                [children, length, self.kb_id],
            )
        return children

    def add_document_row(self, row: DocumentRow) -> None:
        self.catalogue.insert_document(row)

    @guarded
    def delete_document(self, doc_id: str, *, save: bool = True) -> int:
        with self._session.write() as conn:
            removed = self._drop_rows(conn, "doc_id = %s", [doc_id])
        self.catalogue.delete_document_row(doc_id)
        if save:
            self.save()
        return removed

    # -- consistency (``kb check`` / ``kb repair``) --------------------------------------------
    @guarded
    def check(self) -> list[str]:
        """What is inconsistent; [] when nothing is."""
        out = []
        with self._session.read() as conn:
            children, _ = self._counts(conn)
            stored, actual = pg_write.statistics(conn, self._chunks, self.kb_id)
            orphans = pg_write.orphans(conn, self._chunks, self.kb_id)
            manifest = _kb_row(conn, self.name)[1]
        if manifest.children != children:
            out.append(f"manifest says {manifest.children} chunks, the table holds {children}")
        if stored != actual:
            out.append(f"BM25 statistics say {stored}, the chunks give {actual}")
        if orphans:
            out.append(f"{len(orphans)} document(s) have chunks but no document row")
        return out

    @guarded
    def repair(self) -> list[str]:
        """Drops chunks without a document row, re-derives the BM25 statistics and the
        manifest's counts, in one transaction."""
        with self._session.write() as conn:
            orphans = pg_write.orphans(conn, self._chunks, self.kb_id)
            for doc_id in orphans:
                self._drop_rows(conn, "doc_id = %s", [doc_id])
            _, (n, total) = pg_write.statistics(conn, self._chunks, self.kb_id)
            conn.execute(
                "UPDATE kbs SET n_children = %s, total_len = %s WHERE id = %s",
                [n, total, self.kb_id],
            )
        self.save()
        done = [f"dropped the chunks of {len(orphans)} unfinished document(s)"] if orphans else []
        return [*done, "BM25 statistics and manifest counts re-derived from the tables"]
