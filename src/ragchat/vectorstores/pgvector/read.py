"""The reading half of ``PgVectorKB`` (``SearchableKB``, ``ListsChildren``, ``KeepsVectors``):
searches, chunks and counts, read through the instance's ``Session`` (inside its write, when
one is open, so a writer reads its own rows). The SQL of the searches is in ``pg_search.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragchat.embed.base import Matrix, Vector
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.filters import resolved, without_empty
from ragchat.vectorstores.manifest import Manifest
from ragchat.vectorstores.pgvector import search as pg_search
from ragchat.vectorstores.pgvector.conn import Session, guarded, where_filters
from ragchat.vectorstores.pgvector.write import COLUMNS as _COLUMNS

Ranked = list[tuple[str, float]]


def _chunk(r: Sequence[Any]) -> Chunk:
    return Chunk(r[0], r[1], r[5], int(r[2]), r[3], bool(r[4]), dict(r[6] or {}))


def _array(value: Any) -> Vector:
    """pgvector's ``Vector`` (or an array, depending on the adapter's version) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, dtype=np.float32)


class PgReads:
    """Mixed into ``PgVectorKB``, which sets these attributes."""

    settings: Settings
    name: str
    manifest: Manifest
    kb_id: int
    _session: Session
    _chunks: str
    _terms: str

    def _counts(self, conn: Any) -> tuple[int, int]:
        sql = (
            "SELECT count(*) FILTER (WHERE NOT is_parent), count(*) FILTER (WHERE is_parent) "
            f"FROM {self._chunks}"
        )
        children, parents = conn.execute(sql).fetchone()
        return int(children), int(parents)

    # -- reading (SearchableKB) ---------------------------------------------------------------
    def _where(self, filters: Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
        """``ExcludeResolved`` is resolved against this knowledge base just before the query:
        the store has no snapshot to resolve it against, so this is as late as it can be."""
        return where_filters(without_empty(resolved(filters, self)))

    @guarded
    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> Ranked:
        conds, params = self._where(filters)
        vs = self.settings.vector_store
        with self._session.read() as conn:
            return pg_search.dense(
                conn, self._chunks, query_vec, k, conds, params, vs.exact_below, vs.hnsw_ef_search
            )

    @guarded
    def bm25_search(self, query: str, k: int, filters: Mapping[str, Any] | None = None) -> Ranked:
        conds, params = self._where(filters)
        k1, b = float(self.manifest.bm25["k1"]), float(self.manifest.bm25["b"])
        with self._session.read() as conn:
            return pg_search.bm25(
                conn, self._chunks, self._terms, self.kb_id, query, k, conds, params, k1, b
            )

    @guarded
    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]:
        with self._session.read() as conn:
            return pg_search.dense_scores(conn, self._chunks, query_vec, chunk_ids)

    @guarded
    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        k1, b = float(self.manifest.bm25["k1"]), float(self.manifest.bm25["b"])
        with self._session.read() as conn:
            return pg_search.bm25_scores(
                conn, self._chunks, self._terms, self.kb_id, query, chunk_ids, k1, b
            )

    def _select(self, where: str, params: Sequence[Any], order: str = "") -> list[Chunk]:
        sql = f"SELECT {_COLUMNS} FROM {self._chunks} WHERE {where} {order}"
        with self._session.read() as conn:
            return [_chunk(r) for r in conn.execute(sql, list(params)).fetchall()]

    @guarded
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        found = {c.chunk_id: c for c in self._select("chunk_id = ANY(%s)", [list(chunk_ids)])}
        return [found[c] for c in chunk_ids if c in found]

    @guarded
    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        where = "doc_id = %s AND position = %s AND NOT is_parent"
        found = self._select(where, [chunk.doc_id, chunk.position + offset], "LIMIT 1")
        return found[0] if found else None

    @guarded
    def child_count(self) -> int:
        with self._session.read() as conn:
            return self._counts(conn)[0]

    # -- optional capabilities (ListsChildren, KeepsVectors) -------------------------------------
    @guarded
    def children(self) -> list[Chunk]:
        return self._select("NOT is_parent", [], "ORDER BY row_id")

    @guarded
    def parents(self) -> list[Chunk]:
        return self._select("is_parent", [], "ORDER BY doc_id, position")

    @guarded
    def version(self) -> tuple[Any, ...]:
        """Changes with every commit by any writer: the knowledge base's revision."""
        with self._session.read() as conn:
            row = conn.execute(
                "SELECT revision, n_children FROM kbs WHERE id = %s", [self.kb_id]
            ).fetchone()
        return (self.kb_id, *(row or (None, None)))

    @guarded
    def stored_vectors(self, chunk_ids: Sequence[str]) -> Matrix | None:
        if not chunk_ids:
            return None
        sql = (
            f"SELECT chunk_id, embedding FROM {self._chunks} "
            "WHERE chunk_id = ANY(%s) AND embedding IS NOT NULL"
        )
        with self._session.read() as conn:
            found = {r[0]: r[1] for r in conn.execute(sql, [list(chunk_ids)]).fetchall()}
        if any(c not in found for c in chunk_ids):
            return None
        return np.stack([_array(found[c]) for c in chunk_ids])
