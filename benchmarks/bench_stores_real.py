"""The vector stores side by side in one run, on real embeddings: the embedded ``KnowledgeBase``,
Qdrant's engine (``qdrant-edge-py``, Qdrant's Rust storage and search in-process: the closest
stand-in for a server that installs here), ragchat's ``QdrantKB`` in qdrant-client's local
mode (optional: its BM25 runs in Python, seconds per query at 100k) and ``PgVectorKB``.

The collection: distinct ~``--chars``-character windows of SciFact and MedQuAD records
(shuffled, first ``--size``), embedded with the default model (all-MiniLM-L6-v2) as ingestion
embeds them, queries (SciFact claims) as queries are embedded; the vectors are cached
(``--cache``) because embedding 100k texts takes many minutes on two cores. Every store gets the
same chunks and vectors (no embedding while building).

Per store: build time (ingestion throughput without the model), disk per chunk, and per-query
``dense_search``, ``bm25_search`` and the first stage of hybrid retrieval (min-max fusion of
both lists, as ``retrieve.search`` runs it; Edge: both lists fused with ragchat's function),
top 100, one thread, one pass per kind of search, after one untimed pass of them all; dense
recall@10 and @100 against the exact answer (numpy over the same vectors). pgvector is built
as ``kb migrate`` builds it (``create_staged``: rows COPied frozen into tables without a vector
index, one HNSW build at the end, one commit); ``--pg-incremental N`` also times N chunks added
to a table whose HNSW index is already there, against the same N loaded then indexed: the
effect of building the graph once.

Example::

    nice -n 10 .venv/bin/python benchmarks/bench_stores_real.py --size 100000 --queries 200 \\
        --pg-url "$(scripts/pgvector url)" --pg-incremental 20000
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
from _common import (
    doc_text,
    machine_line,
    medquad_corpus,
    print_table,
    scifact_corpus,
    scifact_queries,
    summarise_ms,
)

from ragchat.embed.fake import HashingEmbedder
from ragchat.retrieve.fusion import weighted_minmax_fusion
from ragchat.retrieve.search import search_candidates
from ragchat.settings import RetrievalSettings, Settings, VectorStoreSettings
from ragchat.types import Chunk
from ragchat.vectorstores import factory as stores

DIM = 384
K = 100
STEP = 5000  # chunks per add_chunks call


class GivenVectors(HashingEmbedder):
    """Names the model and dimension; every vector is passed in (queries included)."""

    def __init__(self) -> None:
        super().__init__(dim=DIM)


def windows(text: str, size: int) -> list[str]:
    """Consecutive windows of about ``size`` characters, cut at whitespace."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out


def real_collection(
    n: int, size: int, seed: int, cache: Path, queries: list[str]
) -> tuple[list[Chunk], np.ndarray, np.ndarray]:
    """(chunks, their vectors, the queries' vectors); embedded once, then read from ``cache``."""
    pool = [doc_text(d) for d in scifact_corpus()] + [doc_text(d) for d in medquad_corpus()]
    texts = [w for t in pool for w in windows(t, size)]
    random.Random(seed).shuffle(texts)
    if n > len(texts):
        raise SystemExit(f"only {len(texts):,} windows of {size} characters")
    texts = texts[:n]
    chunks = [
        Chunk(f"d{i // 10}_c{i % 10}", f"d{i // 10}", t, i % 10, None, False, {"n": i})
        for i, t in enumerate(texts)
    ]
    if cache.exists():
        data = np.load(cache)
        if data["docs"].shape[0] >= n and data["queries"].shape[0] >= len(queries):
            return chunks, data["docs"][:n], data["queries"][: len(queries)]
    from ragchat.embed.factory import ingest_settings, load_embedder

    settings = Settings()
    docs_model = load_embedder(ingest_settings(settings) or settings)
    query_model = load_embedder(settings)
    t0 = time.perf_counter()
    parts = []
    for i in range(0, n, 2000):
        parts.append(docs_model.embed_documents(texts[i : i + 2000]))
        print(f"# embedded {min(n, i + 2000):,}/{n:,} in {time.perf_counter() - t0:.0f} s")
    docs = np.concatenate(parts).astype(np.float32)
    qv = np.stack([query_model.embed_query(q) for q in queries]).astype(np.float32)
    print(f"# embedded {n:,} windows in {time.perf_counter() - t0:.0f} s, {machine_line()[2:]}")
    np.savez(cache, docs=docs, queries=qv)
    return chunks, docs, qv


def exact_top(docs: np.ndarray, qvecs: np.ndarray, k: int) -> list[list[int]]:
    scores = qvecs @ docs.T
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    return [sorted(row, key=lambda j, i=i: -scores[i, j]) for i, row in enumerate(top)]


def recall(found: list[list[str]], exact: list[list[int]], chunks: list[Chunk]) -> float:
    hits = sum(
        len(set(f) & {chunks[j].chunk_id for j in e}) for f, e in zip(found, exact, strict=True)
    )
    return hits / max(sum(len(e) for e in exact), 1)


def disk_mib(path: Path) -> float:
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20


# -- building ----------------------------------------------------------------------------------
def settings_for(backend: str, root: Path, args: Any) -> Settings:
    if backend == "pgvector":
        vs = VectorStoreSettings(
            backend="pgvector", url=args.pg_url, pg_schema=f"i29b_{uuid.uuid4().hex[:8]}"
        )
    else:
        vs = VectorStoreSettings(backend=backend)  # type: ignore[arg-type]
    return Settings(data_dir=root / backend, vector_store=vs)


def load(kb: Any, chunks: list[Chunk], vectors: np.ndarray) -> float:
    t0 = time.perf_counter()
    for i in range(0, len(chunks), STEP):
        kb.add_chunks(chunks[i : i + STEP], vectors=vectors[i : i + STEP], save=False)
    return time.perf_counter() - t0


def build_store(backend: str, settings: Settings, chunks: list[Chunk], vectors: np.ndarray):  # type: ignore[no-untyped-def]
    """(knowledge base, build seconds, a note)."""
    store = stores.vector_store(settings)
    if isinstance(store, stores.LoadsInOneWrite):  # pgvector: as kb migrate builds it
        kb = store.create_staged("bench", GivenVectors())
        loaded = load(kb, chunks, vectors)
        t0 = time.perf_counter()
        kb.save()  # builds the HNSW index, then commits
        indexed = time.perf_counter() - t0
        note = f"rows loaded in {loaded:.1f} s, HNSW built and committed in {indexed:.1f} s"
        return kb, loaded + indexed, note
    kb = store.create("bench", GivenVectors())
    loaded = load(kb, chunks, vectors)
    t0 = time.perf_counter()
    kb.save()
    return kb, loaded + time.perf_counter() - t0, ""


def store_mib(settings: Settings) -> float:
    info = stores.vector_store(settings).describe("bench")
    if info.bytes_on_disk is not None:
        return info.bytes_on_disk / 2**20
    return disk_mib(settings.data_dir)


class EdgeKB:
    """``dense_search`` / ``bm25_search`` over a ``qdrant-edge-py`` shard laid out as ragchat's
    Qdrant collections are (a cosine ``dense`` vector, a ``bm25`` sparse vector with IDF)."""

    def __init__(self, path: Path, chunks: list[Chunk], vectors: np.ndarray) -> None:
        import qdrant_edge as qe

        from ragchat.vectorstores.sparse import document_lengths, document_vectors

        self.qe = qe
        texts = [c.text for c in chunks]
        t0 = time.perf_counter()
        lengths = document_lengths(texts)
        sparse = document_vectors(texts, sum(lengths) / max(len(lengths), 1))
        config = qe.EdgeConfig(
            vectors={"dense": qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
            sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        self.shard = qe.EdgeShard.create(str(path), config)
        for i in range(0, len(chunks), 1000):
            points = [
                qe.Point(
                    j,
                    {"dense": vectors[j].tolist(), "bm25": qe.SparseVector(s.indices, s.values)},
                    {"chunk_id": chunks[j].chunk_id, "text": chunks[j].text},
                )
                for j, s in enumerate(sparse[i : i + 1000], start=i)
            ]
            self.shard.update(qe.UpdateOperation.upsert_points(points))
        self.shard.flush()
        self.upserted = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.shard.optimize()  # what a server's optimizer does in the background: HNSW etc.
        self.optimized = time.perf_counter() - t0

    def _ranked(self, query: Any, using: str, k: int) -> list[tuple[str, float]]:
        req = self.qe.QueryRequest(
            limit=k, query=self.qe.Query.Nearest(query, using=using), with_payload=["chunk_id"]
        )
        return [(p.payload["chunk_id"], float(p.score)) for p in self.shard.query(req)]

    def dense_search(self, vec: np.ndarray, k: int) -> list[tuple[str, float]]:
        return self._ranked(vec.tolist(), "dense", k)

    def bm25_search(self, text: str, k: int) -> list[tuple[str, float]]:
        from ragchat.vectorstores.sparse import query_vector

        qv = query_vector(text)
        return self._ranked(self.qe.SparseVector(qv.indices, qv.values), "bm25", k)

    def hybrid(self, text: str, vec: np.ndarray) -> object:
        return weighted_minmax_fusion(self.dense_search(vec, K), self.bm25_search(text, K), 0.5)

    def close(self) -> None:
        self.shard.close()


# -- measuring ---------------------------------------------------------------------------------
def measure(
    kb: Any, queries: list[str], qvecs: np.ndarray, sparse_queries: int | None
) -> tuple[dict[str, dict[str, float]], list[list[str]], list[list[str]]]:
    """Per-search latency, one pass over the queries per kind of search (a query's second
    search never runs right after its first, on caches it just warmed), and the dense answers
    at k=100 (timed) and k=10 (untimed)."""
    minmax = RetrievalSettings(mode="hybrid", fusion="minmax", candidates=K)

    def hybrid(q: str, v: np.ndarray) -> object:
        if isinstance(kb, EdgeKB):
            return kb.hybrid(q, v)
        return search_candidates(kb, minmax, q, v, None, {})

    kinds: dict[str, Callable[[str, np.ndarray], Any]] = {
        "dense": lambda q, v: kb.dense_search(v, K),
        "bm25": lambda q, v: kb.bm25_search(q, K),
        "hybrid": hybrid,
    }
    out: dict[str, dict[str, float]] = {}
    at100: list[list[str]] = []
    for name, call in kinds.items():
        many = len(queries) if name == "dense" or sparse_queries is None else sparse_queries
        times = []
        for q, v in zip(queries[:many], qvecs[:many], strict=True):
            t0 = time.perf_counter()
            result = call(q, v)
            times.append(time.perf_counter() - t0)
            if name == "dense":
                at100.append([c for c, _ in result])
        out[name] = summarise_ms(times) | {"n": len(times)}
    at10 = [[c for c, _ in kb.dense_search(v, 10)] for v in qvecs]
    return out, at100, at10


def hnsw_effect(chunks: list[Chunk], vectors: np.ndarray, root: Path, args: Any) -> str:
    """The same ``n`` chunks into pgvector twice: added to a table that already has its HNSW
    index (what an ingestion does), then loaded first and indexed once (``kb migrate``)."""
    n = args.pg_incremental
    out = []
    for staged in (False, True):
        settings = settings_for("pgvector", root, args)
        store = stores.vector_store(settings)
        try:
            t0 = time.perf_counter()
            if staged:
                kb = store.create_staged("inc", GivenVectors())  # type: ignore[attr-defined]
            else:
                kb = store.create("inc", GivenVectors())
            load(kb, chunks[:n], vectors[:n])
            kb.save()
            out.append(time.perf_counter() - t0)
            kb.close()
        finally:
            from ragchat.vectorstores.pgvector.conn import drop_schema

            drop_schema(settings)
    return (
        f"{n:,} chunks into pgvector: {out[0]:.1f} s into an indexed table "
        f"({n / out[0]:.0f} chunks/s), {out[1]:.1f} s loaded then indexed once "
        f"({n / out[1]:.0f} chunks/s): {out[0] / out[1]:.1f}x"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--chars", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ragchat-bench-real-vectors.npz"))
    ap.add_argument("--backends", default="embedded,qdrant-edge,pgvector")
    ap.add_argument("--pg-url", default=None, help="pgvector's PostgreSQL (scripts/pgvector url)")
    ap.add_argument("--pg-incremental", type=int, default=0, help="see the module docstring")
    ap.add_argument("--pg-keep", action="store_true", help="keep pgvector's schema afterwards")
    ap.add_argument(
        "--sparse-queries",
        type=int,
        default=20,
        help="Qdrant local mode: BM25 and hybrid for this many queries only (dense for all)",
    )
    args = ap.parse_args()
    print(machine_line(), flush=True)
    queries = scifact_queries(args.queries)
    chunks, vectors, qvecs = real_collection(args.size, args.chars, args.seed, args.cache, queries)
    n = len(chunks)
    ex100, ex10 = exact_top(vectors, qvecs, K), exact_top(vectors, qvecs, 10)
    print(f"# {n:,} chunks, mean {np.mean([len(c.text) for c in chunks]):.0f} characters")
    rows = []
    with tempfile.TemporaryDirectory(prefix="i29b-bench-") as tmp:
        for backend in args.backends.split(","):
            print(f"# {backend}: building, {machine_line()[2:]}", flush=True)
            few = args.sparse_queries if backend == "qdrant" else None
            if backend == "qdrant-edge":
                kb: Any = EdgeKB(Path(tmp) / "edge", chunks, vectors)
                build_s = kb.upserted + kb.optimized
                note = f"upserted in {kb.upserted:.1f} s, optimize (HNSW) {kb.optimized:.1f} s"
                size = disk_mib(Path(tmp) / "edge")
                settings = None
            else:
                settings = settings_for(backend, Path(tmp), args)
                kb, build_s, note = build_store(backend, settings, chunks, vectors)
                size = store_mib(settings)
            # One untimed pass first: every store is timed with its files in the page cache
            # (Edge maps its segments: a first pass pays their page faults).
            measure(kb, queries, qvecs, few)
            figures, at100, at10 = measure(kb, queries, qvecs, few)
            r100, r10 = recall(at100, ex100, chunks), recall(at10, ex10, chunks)
            for step, f in figures.items():
                rows.append([backend, step, f["n"], f["p50"], f["p95"], f["mean"]])
            kb.close()
            if settings is not None and backend == "pgvector":
                from ragchat.vectorstores.pgvector.conn import drop_schema

                if args.pg_keep:
                    note += f"; kept in schema {settings.vector_store.pg_schema}"
                else:
                    drop_schema(settings)
            print(
                f"# {n:,} {backend}: built in {build_s:.1f} s ({n / build_s:.0f} chunks/s; "
                f"{note}), {size:.1f} MiB ({size * 2**20 / n:.0f} B/chunk), dense recall@10 "
                f"{r10:.4f}, @100 {r100:.4f}; {machine_line()[2:]}",
                flush=True,
            )
        if args.pg_incremental:
            print(f"# {hnsw_effect(chunks, vectors, Path(tmp), args)}; {machine_line()[2:]}")
    print_table(["store", "search", "queries", "p50 ms", "p95 ms", "mean ms"], rows)


if __name__ == "__main__":
    main()
