"""Qdrant Edge (``qdrant-edge-py``, the Qdrant engine in-process) against qdrant-client's local
mode, on the collection layout ragchat uses (a ``dense`` cosine vector and a ``bm25`` sparse
vector with the IDF modifier), same synthetic chunks and queries as ``bench_vector_store.py``.
Measures upsert time and per-query dense and sparse top-100 latency. Edge is not a ragchat
backend (see docs/benchmarks.md for why); this is the measurement behind that note.

Example::

    .venv/bin/pip install qdrant-edge-py
    .venv/bin/python benchmarks/bench_qdrant_edge.py --sizes 5000 --queries 100
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import machine_line, print_table, scifact_queries, summarise_ms
from bench_vector_store import synthetic, unit

from ragchat.index.qdrant_conn import point_id
from ragchat.index.sparse import document_lengths, document_vectors, query_vector


def sparse_docs(texts: list[str]) -> list[Any]:
    lengths = document_lengths(texts)
    return document_vectors(texts, sum(lengths) / max(len(lengths), 1))


def edge(path: Path, ids: list[str], vectors: np.ndarray, sparse: list[Any], texts: list[str]):  # type: ignore[no-untyped-def]
    import qdrant_edge as qe

    config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=vectors.shape[1], distance=qe.Distance.Cosine)},
        sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    shard = qe.EdgeShard.create(str(path), config)
    t0 = time.perf_counter()
    points = [
        qe.Point(
            i,
            {"dense": v.tolist(), "bm25": qe.SparseVector(s.indices, s.values)},
            {"chunk_id": c, "text": t},
        )
        for i, (c, v, s, t) in enumerate(zip(ids, vectors, sparse, texts, strict=True))
    ]
    for i in range(0, len(points), 1000):
        shard.update(qe.UpdateOperation.upsert_points(points[i : i + 1000]))
    shard.flush()
    built = time.perf_counter() - t0

    def dense(q: np.ndarray) -> Any:
        req = qe.QueryRequest(
            limit=100, query=qe.Query.Nearest(q.tolist(), using="dense"), with_payload=["chunk_id"]
        )
        return shard.query(req)

    def bm25(text: str) -> Any:
        qv = query_vector(text)
        req = qe.QueryRequest(
            limit=100,
            query=qe.Query.Nearest(qe.SparseVector(qv.indices, qv.values), using="bm25"),
            with_payload=["chunk_id"],
        )
        return shard.query(req)

    return built, dense, bm25


def local(path: Path, ids: list[str], vectors: np.ndarray, sparse: list[Any], texts: list[str]):  # type: ignore[no-untyped-def]
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(path))
    client.create_collection(
        "bench",
        vectors_config={
            "dense": models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)
        },
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    t0 = time.perf_counter()
    points = [
        models.PointStruct(
            id=point_id("chunk", c),
            vector={
                "dense": v.tolist(),
                "bm25": models.SparseVector(indices=s.indices, values=s.values),
            },
            payload={"chunk_id": c, "text": t},
        )
        for c, v, s, t in zip(ids, vectors, sparse, texts, strict=True)
    ]
    for i in range(0, len(points), 1000):
        client.upsert("bench", points[i : i + 1000])
    built = time.perf_counter() - t0

    def dense(q: np.ndarray) -> Any:
        return client.query_points(
            "bench", query=q.tolist(), using="dense", limit=100, with_payload=["chunk_id"]
        )

    def bm25(text: str) -> Any:
        qv = query_vector(text)
        return client.query_points(
            "bench",
            query=models.SparseVector(indices=qv.indices, values=qv.values),
            using="bm25",
            limit=100,
            with_payload=["chunk_id"],
        )

    return built, dense, bm25


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    queries = scifact_queries(args.queries)
    qvecs = unit(np.random.default_rng(args.seed + 1), len(queries))
    print(machine_line())
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        chunks, vectors = synthetic(n, 700, args.seed)
        texts = [c.text for c in chunks]
        ids = [c.chunk_id for c in chunks]
        sparse = sparse_docs(texts)
        for name, make in (("qdrant-edge-py", edge), ("qdrant-client local", local)):
            with tempfile.TemporaryDirectory() as tmp:
                built, dense, bm25 = make(Path(tmp) / "s", ids, vectors, sparse, texts)
                dense(qvecs[0]), bm25(queries[0])  # warm-up
                td, tb = [], []
                for q, v in zip(queries, qvecs, strict=True):
                    t0 = time.perf_counter()
                    dense(v)
                    td.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    bm25(q)
                    tb.append(time.perf_counter() - t0)
                d, b = summarise_ms(td), summarise_ms(tb)
                rows.append([n, name, built, d["p50"], d["p95"], b["p50"], b["p95"]])
                print(f"# {n:,} {name} done; {machine_line()[2:]}")
    print_table(
        [
            "chunks",
            "engine",
            "upsert s",
            "dense p50 ms",
            "dense p95 ms",
            "bm25 p50 ms",
            "bm25 p95 ms",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
