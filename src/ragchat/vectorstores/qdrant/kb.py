"""``QdrantKB``: a knowledge base kept in one Qdrant collection (a server, a cluster, or
qdrant-client's on-disk local mode), behind the same contracts as the embedded
``KnowledgeBase``: ``SearchableKB``, ``ListsChildren``, ``KeepsVectors``, ``WritableKB``, plus
``SearchesHybrid`` (both first-stage lists, or the store's own RRF, in one round trip)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.errors import (
    IndexStateError,
    KnowledgeBaseNotFound,
)
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow, children_and_vectors
from ragchat.vectorstores.manifest import Manifest, check_embedder, now_iso
from ragchat.vectorstores.names import validate_name
from ragchat.vectorstores.qdrant.catalogue import QdrantCatalogue, scroll
from ragchat.vectorstores.qdrant.conn import (
    CHILD,
    DENSE,
    PARENT,
    SPARSE,
    chunk_payload,
    collection_name,
    connect,
    guarded,
    kind_is,
    models,
    point_id,
    search_filter,
    to_chunk,
)
from ragchat.vectorstores.sparse import SparseVec, document_lengths, document_vectors, query_vector

log = logging.getLogger(__name__)
Ranked = list[tuple[str, float]]
_IDS = ["chunk_id"]


def _sparse(vec: SparseVec) -> Any:
    return models.SparseVector(indices=vec.indices, values=vec.values)


def _ranked(points: Sequence[Any]) -> Ranked:
    return [(str((p.payload or {})["chunk_id"]), float(p.score)) for p in points]


class QdrantKB:
    def __init__(self, settings: Settings, name: str, manifest: Manifest, embedder: Embedder):
        self.settings = settings
        self.name = name
        self.manifest = manifest
        self.embedder = embedder
        self.collection = collection_name(settings, name)
        self._client = connect(settings)
        self.catalogue = QdrantCatalogue(self._client, self.collection)

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
    ) -> QdrantKB:
        collection = collection_name(settings, validate_name(name))
        client = connect(settings)
        if client.collection_exists(collection):
            if QdrantCatalogue(client, collection).manifest() is not None:
                raise IndexStateError(f"knowledge base {name!r} already exists in {collection}")
        else:
            vs = settings.vector_store
            client.create_collection(
                collection,
                vectors_config={
                    DENSE: models.VectorParams(size=embedder.dim, distance=models.Distance.COSINE)
                },
                sparse_vectors_config={
                    SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
                shard_number=vs.shards,
                replication_factor=vs.replicas,
            )
            if vs.url:  # local mode has no payload indexes (it scans)
                for key, schema in (
                    ("kind", models.PayloadSchemaType.KEYWORD),
                    ("doc_id", models.PayloadSchemaType.KEYWORD),
                    ("position", models.PayloadSchemaType.INTEGER),
                    ("file_path", models.PayloadSchemaType.KEYWORD),
                    ("sha256", models.PayloadSchemaType.KEYWORD),
                ):
                    client.create_payload_index(collection, key, field_schema=schema)
        manifest = Manifest(
            name=name,
            embedding_model=embedder.model_name,
            dim=embedder.dim,
            dense_backend="qdrant",
            chunking=dict(chunking or {}),
            created=now_iso(),
            updated=now_iso(),
        )
        kb = cls(settings, name, manifest, embedder)
        kb.save()  # the manifest point last: a collection without it is not a knowledge base
        return kb

    @classmethod
    @guarded
    def open(
        cls, settings: Settings, name: str, embedder: Embedder, *, strict_model: bool = True
    ) -> QdrantKB:
        manifest = cls.read_manifest(settings, name)
        check_embedder(manifest, name, embedder, strict=strict_model)
        return cls(settings, name, manifest, embedder)

    @classmethod
    def open_or_create(
        cls, settings: Settings, name: str, embedder: Embedder, **kwargs: Any
    ) -> QdrantKB:
        if name in cls.names(settings):
            return cls.open(settings, name, embedder)
        return cls.create(settings, name, embedder, **kwargs)

    @staticmethod
    @guarded
    def read_manifest(settings: Settings, name: str) -> Manifest:
        collection = collection_name(settings, validate_name(name))
        client = connect(settings)
        manifest = None
        if client.collection_exists(collection):
            manifest = QdrantCatalogue(client, collection).manifest()
        if manifest is None:
            where = settings.vector_store.url or settings.qdrant_path
            raise KnowledgeBaseNotFound(f"no knowledge base named {name!r} in Qdrant ({where})")
        return manifest

    @staticmethod
    @guarded
    def names(settings: Settings) -> list[str]:
        prefix = settings.vector_store.collection_prefix
        client = connect(settings)
        out = []
        for c in client.get_collections().collections:
            manifest = c.name.startswith(prefix) and QdrantCatalogue(client, c.name).manifest()
            if manifest:
                out.append(c.name[len(prefix) :])
        return sorted(out)

    @staticmethod
    @guarded
    def delete(settings: Settings, name: str) -> None:
        QdrantKB.read_manifest(settings, name)
        connect(settings).delete_collection(collection_name(settings, name))

    @staticmethod
    def describe(settings: Settings, name: str) -> dict[str, Any]:
        info: dict[str, Any] = QdrantKB.read_manifest(settings, name).model_dump()
        info["collection"] = collection_name(settings, name)
        info["store"] = settings.vector_store.url or str(settings.qdrant_path)
        return info

    def stale(self) -> bool:
        """Never: every read asks the store, which other processes write to directly."""
        return False

    def close(self) -> None:
        """The client is shared by every knowledge base of the store: nothing to release."""

    @guarded
    def save(self) -> None:
        m = self.manifest
        m.children = self.catalogue.count(CHILD)
        m.parents = self.catalogue.count(PARENT)
        m.documents = self.catalogue.document_count()
        m.files = len(self.catalogue.files())
        m.updated = now_iso()
        stored = self.catalogue.manifest()  # another worker may have written since we read it
        m.revision = (stored.revision if stored else 0) + 1
        self.catalogue.save_manifest(m)

    # -- consistency (``kb check`` / ``kb repair``) --------------------------------------------
    def _orphans(self) -> list[str]:
        """Doc ids with chunk points but no document point: a write that died between its
        chunks and its document rows (ingestion writes chunks, then documents, then files,
        then the manifest)."""
        flt = models.Filter(
            must=[models.FieldCondition(key="kind", match=models.MatchAny(any=[CHILD, PARENT]))]
        )
        docs = {str(p.payload["doc_id"]) for p in scroll(self._client, self.collection, flt)}
        return sorted(docs - self.catalogue.known_documents(docs))

    @guarded
    def check(self) -> list[str]:
        """Problems a crashed write left; [] when none. Another worker's write in progress
        looks the same: run it when nothing ingests."""
        out = []
        children = self.catalogue.count(CHILD)
        stored = self.catalogue.manifest()
        if stored is not None and stored.children != children:
            out.append(f"manifest says {stored.children} chunks, the collection holds {children}")
        orphans = self._orphans()
        if orphans:
            out.append(f"{len(orphans)} document(s) have chunks but no document row")
        return out

    @guarded
    def repair(self) -> list[str]:
        """Rolls the unfinished writes back (their chunks are deleted; their files were never
        recorded, so a re-ingest adds them again) and re-derives the manifest's counts."""
        orphans = self._orphans()
        for doc_id in orphans:
            self.delete_document(doc_id, save=False)
        self.save()
        done = [f"dropped the chunks of {len(orphans)} unfinished document(s)"] if orphans else []
        return [*done, "manifest counts re-derived from the collection"]

    # -- writing -----------------------------------------------------------------------------
    def pin_avgdl(self, avgdl: float | None) -> None:
        """Weighs new BM25 vectors with this average length (``kb migrate`` pins the source's,
        so scores equal the embedded index's); None goes back to the running mean."""
        self.manifest.bm25 = {**self.manifest.bm25, "pinned_avgdl": avgdl}

    def _avgdl(self, lengths: Sequence[int]) -> float:
        """The running mean length of every child ever indexed, this batch included (older
        points keep the mean of their time: a document is not re-weighted when others come)."""
        bm = dict(self.manifest.bm25)
        bm["tokens"] = int(bm.get("tokens", 0)) + int(sum(lengths))
        bm["indexed"] = int(bm.get("indexed", 0)) + len(lengths)
        self.manifest.bm25 = bm
        pinned = bm.get("pinned_avgdl")
        return float(pinned) if pinned else bm["tokens"] / max(bm["indexed"], 1)

    @guarded
    def add_chunks(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: Matrix | None = None,
        progress: bool = False,
        save: bool = True,
    ) -> int:
        """Upserts chunks by id: writing a chunk again replaces it (a re-run after a crash
        converges on the same points)."""
        children, vectors = children_and_vectors(chunks, vectors, self.embedder, progress=progress)
        texts = [c.text for c in children]
        avgdl = self._avgdl(document_lengths(texts))
        sparse = document_vectors(texts, avgdl, self.manifest.bm25["k1"], self.manifest.bm25["b"])
        points = [
            models.PointStruct(
                id=point_id("chunk", c.chunk_id),
                vector={DENSE: np.asarray(v, dtype=np.float32).tolist(), SPARSE: _sparse(s)},
                payload=chunk_payload(c),
            )
            for c, v, s in zip(children, vectors, sparse, strict=True)
        ] + [
            models.PointStruct(
                id=point_id("chunk", c.chunk_id), vector={}, payload=chunk_payload(c)
            )
            for c in chunks
            if c.is_parent
        ]
        size = self.settings.vector_store.batch_size
        for i in range(0, len(points), size):
            self._client.upsert(self.collection, points[i : i + size], wait=True)
        if save:
            self.save()
        return len(children)

    def add_document_row(self, row: DocumentRow) -> None:
        self.catalogue.insert_document(row)

    @guarded
    def delete_document(self, doc_id: str, *, save: bool = True) -> int:
        of_doc = models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id))
        children = models.Filter(must=[kind_is(CHILD), of_doc])
        removed = int(self._client.count(self.collection, count_filter=children, exact=True).count)
        chunks = models.Filter(
            must=[
                of_doc,
                models.FieldCondition(key="kind", match=models.MatchAny(any=[CHILD, PARENT])),
            ]
        )
        self._client.delete(self.collection, models.FilterSelector(filter=chunks), wait=True)
        self.catalogue.delete_document_row(doc_id)
        if save:
            self.save()
        return removed

    # -- reading (SearchableKB) ---------------------------------------------------------------
    @guarded
    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> Ranked:
        found = self._client.query_points(
            self.collection,
            query=np.asarray(query_vec, dtype=np.float32).tolist(),
            using=DENSE,
            query_filter=search_filter(filters, self),
            limit=k,
            with_payload=_IDS,
        )
        return _ranked(found.points)

    @guarded
    def bm25_search(self, query: str, k: int, filters: Mapping[str, Any] | None = None) -> Ranked:
        vec = query_vector(query)
        if not vec.indices:
            return []
        found = self._client.query_points(
            self.collection,
            query=_sparse(vec),
            using=SPARSE,
            query_filter=search_filter(filters, self),
            limit=k,
            with_payload=_IDS,
        )
        return [(c, s) for c, s in _ranked(found.points) if s > 0]

    @guarded
    def hybrid_search(
        self,
        query: str,
        query_vec: Vector,
        k: int,
        filters: Mapping[str, Any] | None = None,
        *,
        rrf_k: int | None = None,
    ) -> tuple[Ranked, Ranked, Ranked | None]:
        flt = search_filter(filters, self)
        dense_q = models.QueryRequest(
            query=np.asarray(query_vec, dtype=np.float32).tolist(),
            using=DENSE,
            filter=flt,
            limit=k,
            with_payload=_IDS,
        )
        vec = query_vector(query)
        requests = [dense_q]
        if vec.indices:
            requests.append(
                models.QueryRequest(
                    query=_sparse(vec), using=SPARSE, filter=flt, limit=k, with_payload=_IDS
                )
            )
            if rrf_k is not None:
                # Qdrant ranks from 0 (1 / (k + rank)), ragchat from 1: k + 1 gives its scores.
                prefetch = [
                    models.Prefetch(query=r.query, using=r.using, filter=flt, limit=k)
                    for r in requests
                ]
                requests.append(
                    models.QueryRequest(
                        prefetch=prefetch,
                        query=models.RrfQuery(rrf=models.Rrf(k=rrf_k + 1)),
                        limit=k,
                        with_payload=_IDS,
                    )
                )
        answers = self._client.query_batch_points(self.collection, requests)
        dense = _ranked(answers[0].points)
        bm25 = [(c, s) for c, s in _ranked(answers[1].points) if s > 0] if vec.indices else []
        fused = None
        if rrf_k is not None:
            fused = _ranked(answers[2].points) if vec.indices else dense_rrf(dense, rrf_k)
        return dense, bm25, fused

    def _points(self, chunk_ids: Sequence[str], *, vectors: bool = False) -> dict[str, Any]:
        ids = [point_id("chunk", c) for c in dict.fromkeys(chunk_ids)]
        found = self._client.retrieve(
            self.collection, ids, with_payload=True, with_vectors=[DENSE] if vectors else False
        )
        return {str((p.payload or {})["chunk_id"]): p for p in found}

    @guarded
    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]:
        vectors = self.stored_vectors_partial(chunk_ids)
        q = np.asarray(query_vec, dtype=np.float32)
        return [float(vectors[c] @ q) if c in vectors else 0.0 for c in chunk_ids]

    @guarded
    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        vec = query_vector(query)
        if not vec.indices or not chunk_ids:
            return [0.0] * len(chunk_ids)
        ids: list[Any] = [point_id("chunk", c) for c in dict.fromkeys(chunk_ids)]
        found = self._client.query_points(
            self.collection,
            query=_sparse(vec),
            using=SPARSE,
            query_filter=models.Filter(must=[models.HasIdCondition(has_id=ids)]),
            limit=len(ids),
            with_payload=_IDS,
        )
        scores = dict(_ranked(found.points))
        return [scores.get(c, 0.0) for c in chunk_ids]

    @guarded
    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        found = self._points(chunk_ids)
        return [to_chunk(found[c].payload) for c in chunk_ids if c in found]

    @guarded
    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        flt = models.Filter(
            must=[
                kind_is(CHILD),
                models.FieldCondition(key="doc_id", match=models.MatchValue(value=chunk.doc_id)),
                models.FieldCondition(
                    key="position", match=models.MatchValue(value=chunk.position + offset)
                ),
            ]
        )
        points, _ = self._client.scroll(self.collection, scroll_filter=flt, limit=1)
        return to_chunk(points[0].payload) if points else None

    @guarded
    def child_count(self) -> int:
        return self.catalogue.count(CHILD)

    # -- optional capabilities (ListsChildren, KeepsVectors) -------------------------------------
    @guarded
    def children(self) -> list[Chunk]:
        flt = models.Filter(must=[kind_is(CHILD)])
        return [to_chunk(p.payload) for p in scroll(self._client, self.collection, flt)]

    @guarded
    def parents(self) -> list[Chunk]:
        flt = models.Filter(must=[kind_is(PARENT)])
        return [to_chunk(p.payload) for p in scroll(self._client, self.collection, flt)]

    @guarded
    def version(self) -> tuple[Any, ...]:
        """Changes with any write by any worker: the stored manifest's time and the count."""
        stored = self.catalogue.manifest()
        return (self.collection, stored.revision if stored else None, self.child_count())

    def stored_vectors_partial(self, chunk_ids: Sequence[str]) -> dict[str, Vector]:
        found = self._points(chunk_ids, vectors=True)
        return {
            c: np.asarray(p.vector[DENSE], dtype=np.float32)
            for c, p in found.items()
            if isinstance(p.vector, dict) and DENSE in p.vector
        }

    @guarded
    def stored_vectors(self, chunk_ids: Sequence[str]) -> Matrix | None:
        vectors = self.stored_vectors_partial(chunk_ids)
        if not chunk_ids or any(c not in vectors for c in chunk_ids):
            return None
        return np.stack([vectors[c] for c in chunk_ids])


def dense_rrf(dense: Ranked, rrf_k: int) -> Ranked:
    """RRF of the dense list alone (a query without one BM25 term)."""
    return [(c, 1.0 / (rrf_k + rank)) for rank, (c, _) in enumerate(dense, start=1)]
