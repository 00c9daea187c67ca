"""Per-query search latency of the vector stores side by side, on the same synthetic
collection: the embedded ``KnowledgeBase``, ``QdrantKB`` (qdrant-client's local mode by
default, or a server with ``--url``) and ``PgVectorKB`` (``--pg-url``, a scratch schema dropped
afterwards; ``--pg-index-after`` loads without the HNSW index and builds it at the end, to
show what the index costs at write time). pgvector's dense recall@100 against the embedded
store's exact answers is printed too.

The collection is synthetic but made of real text, as in ``bench_bm25.py``: each child is a
window of ``--doc-chars`` characters of a random SciFact or MedQuAD record, with a random unit
384-d vector (the vectors' values do not change the work a store does). Queries are real
SciFact claims with random unit query vectors. Measured per query: ``dense_search``,
``bm25_search`` and the first stage of hybrid retrieval as ``retrieve.search`` runs it
(min-max: both lists; rrf: the store's own fusion on Qdrant), top 100 candidates, one thread.
Building is timed too (no embedding: vectors are given).

Example::

    .venv/bin/python benchmarks/bench_vector_store.py --sizes 5000 --queries 200
    .venv/bin/python benchmarks/bench_vector_store.py --backends embedded,pgvector \
        --pg-url "$(scripts/pgvector url)" --sizes 100000
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
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
from ragchat.retrieve.search import search_candidates
from ragchat.settings import RetrievalSettings, Settings, VectorStoreSettings
from ragchat.types import Chunk
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import WritableKB

DIM = 384


class FixedDim(HashingEmbedder):
    """Names the dimension; the benchmark passes every vector itself."""

    def __init__(self) -> None:
        super().__init__(dim=DIM)


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def synthetic(n: int, doc_chars: int, seed: int) -> tuple[list[Chunk], np.ndarray]:
    pool = [doc_text(d) for d in scifact_corpus()] + [doc_text(d) for d in medquad_corpus()]
    rnd = random.Random(seed)
    chunks = []
    for i in range(n):
        text = pool[rnd.randrange(len(pool))]
        if len(text) > doc_chars:
            start = rnd.randrange(len(text) - doc_chars + 1)
            text = text[start : start + doc_chars]
        doc = f"d{i // 10}"  # ten children per document
        chunks.append(Chunk(f"{doc}_c{i % 10}", doc, text, i % 10, None, False, {"n": i}))
    return chunks, unit(np.random.default_rng(seed), n)


def build(
    backend: str, root: Path, url: str | None, chunks: list[Chunk], vectors: Any, args: Any
) -> tuple[Any, Settings, float, str]:
    """(knowledge base, its settings, seconds to build, a note on the build)."""
    if backend == "pgvector":
        vs = VectorStoreSettings(
            backend="pgvector", url=args.pg_url, pg_schema=f"bench_{os.getpid()}"
        )
    else:
        vs = VectorStoreSettings(backend=backend, url=url)  # type: ignore[arg-type]
    settings = Settings(data_dir=root / backend, vector_store=vs)
    kb = stores.create_kb(settings, "bench", FixedDim())
    index_after = backend == "pgvector" and args.pg_index_after
    if index_after:
        with kb._session.write() as conn:  # type: ignore[attr-defined]
            conn.execute(f"DROP INDEX {kb._chunks}_hnsw")  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    step = 5000
    for i in range(0, len(chunks), step):
        kb.add_chunks(chunks[i : i + step], vectors=vectors[i : i + step], save=False)
    kb.save()
    note = ""
    if index_after:
        loaded = time.perf_counter() - t0
        vs_ = settings.vector_store
        with kb._session.write() as conn:  # type: ignore[attr-defined]
            conn.execute(
                f"CREATE INDEX {kb._chunks}_hnsw ON {kb._chunks} "  # type: ignore[attr-defined]
                f"USING hnsw (embedding vector_ip_ops) WITH (m = {vs_.hnsw_m}, "
                f"ef_construction = {vs_.hnsw_ef_construction})"
            )
        kb.save()
        indexed = time.perf_counter() - t0 - loaded
        note = f"loaded without the HNSW index in {loaded:.1f} s, index built in {indexed:.1f} s"
    return kb, settings, time.perf_counter() - t0, note


def store_mib(backend: str, settings: Settings, folder: Path) -> float:
    if backend == "pgvector":
        return stores.describe_kb(settings, "bench").bytes_on_disk / 2**20  # type: ignore[operator]
    return disk_mib(folder)


def recall(found: list[list[str]], exact: list[list[str]]) -> float:
    hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
    return hits / max(sum(len(e) for e in exact), 1)


def measure(
    kb: WritableKB, queries: list[str], qvecs: np.ndarray, sparse_queries: int | None = None
) -> dict[str, dict[str, float]]:
    """Every search for each query; the ones using BM25 only for the first ``sparse_queries``
    (local mode scores sparse vectors in Python: seconds per query at 100k chunks)."""
    out: dict[str, list[float]] = {"dense": [], "bm25": [], "hybrid minmax": [], "hybrid rrf": []}
    measure.dense = []  # type: ignore[attr-defined]
    minmax = RetrievalSettings(mode="hybrid", fusion="minmax", candidates=100)
    rrf = RetrievalSettings(mode="hybrid", fusion="rrf", candidates=100)
    for i, (q, v) in enumerate(zip(queries, qvecs, strict=True)):
        calls: list[tuple[str, Callable[[], object]]] = [
            ("dense", partial(kb.dense_search, v, 100)),
            ("bm25", partial(kb.bm25_search, q, 100)),
            ("hybrid minmax", partial(search_candidates, kb, minmax, q, v, None, {})),
            ("hybrid rrf", partial(search_candidates, kb, rrf, q, v, None, {})),
        ]
        if sparse_queries is not None and i >= sparse_queries:
            calls = calls[:1]
        for name, call in calls:
            t0 = time.perf_counter()
            result = call()
            out[name].append(time.perf_counter() - t0)
            if name == "dense":
                measure.dense.append([c for c, _ in result])  # type: ignore[attr-defined,union-attr]
    return {k: summarise_ms(v) | {"n": len(v)} for k, v in out.items() if v}


def disk_mib(path: Path) -> float:
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--doc-chars", type=int, default=700)
    ap.add_argument("--backends", default="embedded,qdrant")
    ap.add_argument("--url", default=None, help="a Qdrant server instead of local mode")
    ap.add_argument("--pg-url", default=None, help="pgvector's PostgreSQL (scripts/pgvector url)")
    ap.add_argument("--pg-index-after", action="store_true", help="pgvector: HNSW after loading")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--sparse-queries",
        type=int,
        default=None,
        help="Qdrant: run the BM25 and hybrid searches for this many queries only (dense for all)",
    )
    args = ap.parse_args()
    queries = scifact_queries(args.queries)
    qvecs = unit(np.random.default_rng(args.seed + 1), len(queries))
    print(machine_line())
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        chunks, vectors = synthetic(n, args.doc_chars, args.seed)
        with tempfile.TemporaryDirectory() as tmp:
            exact: list[list[str]] | None = None
            for backend in args.backends.split(","):
                kb, settings, build_s, note = build(
                    backend, Path(tmp), args.url, chunks, vectors, args
                )
                size = store_mib(backend, settings, Path(tmp) / backend)
                # warm-up: first-query caches (BM25 weights, local-mode structures)
                few = args.sparse_queries if backend == "qdrant" else None
                measure(kb, queries[:1], qvecs[:1], few)
                figures = measure(kb, queries, qvecs, few)
                dense_ids = measure.dense  # type: ignore[attr-defined]
                for step, f in figures.items():
                    rows.append([n, backend, step, f["n"], f["p50"], f["p95"], f["mean"], build_s])
                kb.close()
                if backend == "embedded":
                    exact = dense_ids
                elif exact is not None:
                    note += f"; dense recall@100 vs exact {recall(dense_ids, exact):.4f}"
                if backend == "pgvector":
                    from ragchat.vectorstores.pgvector.conn import drop_schema

                    drop_schema(settings)
                print(
                    f"# {n:,} {backend}: built in {build_s:.1f} s, {size:.1f} MiB on disk "
                    f"({size * 2**20 / n:.0f} B/chunk) {note}, {machine_line()[2:]}",
                    flush=True,
                )
    headers = ["chunks", "store", "search", "queries", "p50 ms", "p95 ms", "mean ms", "build s"]
    print_table(headers, rows)


if __name__ == "__main__":
    main()
