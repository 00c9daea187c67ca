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
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _common import (
    emit_result,
    machine_line,
    print_table,
    rss_mib,
    run_worker,
    scifact_queries,
    summarise_ms,
)
from bench_vector_store import synthetic, unit

from ragchat.vectorstores.qdrant.conn import point_id
from ragchat.vectorstores.sparse import document_lengths, document_vectors, query_vector

SCRIPT = Path(__file__).resolve()


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
    return built, *edge_queries(shard), shard


def edge_queries(shard: Any) -> tuple[Any, Any]:
    import qdrant_edge as qe

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

    return dense, bm25


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
    return built, *local_queries(client), client


def local_queries(client: Any) -> tuple[Any, Any]:
    from qdrant_client import models

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

    return dense, bm25


def timed(dense: Any, bm25: Any, queries: list[str], qvecs: np.ndarray) -> list[float]:
    """Dense and BM25 p50/p95 ms over the queries, after one warm-up query."""
    dense(qvecs[0]), bm25(queries[0])
    td, tb = [], []
    for q, v in zip(queries, qvecs, strict=True):
        t0 = time.perf_counter()
        dense(v)
        td.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        bm25(q)
        tb.append(time.perf_counter() - t0)
    d, b = summarise_ms(td), summarise_ms(tb)
    return [d["p50"], d["p95"], b["p50"], b["p95"]]


def disk_mib(path: Path) -> float:
    """Allocated, not apparent, size: Qdrant's WAL files are sparse (32 MiB each, mostly holes)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 2**20


def load_worker(spec: dict[str, Any]) -> dict[str, Any]:
    """A fresh process loads the shard and queries it: the engine's own memory for it."""
    import qdrant_edge as qe

    queries = scifact_queries(spec["queries"])
    qvecs = unit(np.random.default_rng(spec["seed"] + 1), len(queries))
    from qdrant_client import QdrantClient  # imported before the baseline, as qdrant_edge is

    before = rss_mib()
    t0 = time.perf_counter()
    if spec.get("engine") == "local":
        client = QdrantClient(path=spec["path"])
        load_s = time.perf_counter() - t0
        after_load = rss_mib()
        timed(*local_queries(client), queries, qvecs)
    else:
        shard = qe.EdgeShard.load(spec["path"])
        load_s = time.perf_counter() - t0
        after_load = rss_mib()
        timed(*edge_queries(shard), queries, qvecs)
    return {"load_s": load_s, "before": before, "after_load": after_load, "after": rss_mib()}


def report_rss(n: int, name: str, spec: dict[str, Any]) -> None:
    r = run_worker(SCRIPT, spec)
    print(
        f"# {n:,} {name}: fresh process RSS {r['before']:.0f} MiB before load, "
        f"{r['after_load']:.0f} after load ({r['load_s']:.2f} s), {r['after']:.0f} after "
        f"{spec['queries']} dense + BM25 queries; {machine_line()[2:]}",
        flush=True,
    )


def edge_rows(n: int, tmp: Path, data: tuple[Any, ...], args: argparse.Namespace) -> list[Any]:
    """Edge as upserted (appendable segments, scanned), then after ``optimize`` (what a
    server's optimizer does in the background: indexed segments, HNSW for dense)."""
    ids, vectors, sparse, texts, queries, qvecs = data
    path = tmp / "edge"
    built, dense, bm25, shard = edge(path, ids, vectors, sparse, texts)
    rows = [
        [
            n,
            "qdrant-edge-py, as upserted",
            built,
            disk_mib(path),
            *timed(dense, bm25, queries, qvecs),
        ]
    ]
    t0 = time.perf_counter()
    shard.optimize()
    optimized = time.perf_counter() - t0
    label = f"qdrant-edge-py, optimized ({optimized:.1f} s)"
    rows.append([n, label, built + optimized, disk_mib(path), *timed(dense, bm25, queries, qvecs)])
    shard.close()
    del shard, dense, bm25
    parts = ", ".join(
        f"{d.name} {disk_mib(d):.1f} MiB" for d in sorted(path.iterdir()) if d.is_dir()
    )
    print(f"# {n:,} edge on disk: {parts}", flush=True)
    report_rss(n, "edge", {"path": str(path), "queries": args.queries, "seed": args.seed})
    return rows


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        emit_result(load_worker(json.loads(sys.argv[2])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--engines", default="edge,local", help="edge, local or both")
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
        data = (ids, vectors, sparse, texts, queries, qvecs)
        engines = args.engines.split(",")
        with tempfile.TemporaryDirectory() as tmp:
            if "edge" in engines:
                rows += edge_rows(n, Path(tmp), data, args)
            if "local" in engines:
                built, dense, bm25, client = local(Path(tmp) / "local", ids, vectors, sparse, texts)
                size = disk_mib(Path(tmp) / "local")
                rows.append(
                    [n, "qdrant-client local", built, size, *timed(dense, bm25, queries, qvecs)]
                )
                client.close()
                spec = {"engine": "local", "path": str(Path(tmp) / "local")}
                report_rss(n, "local", spec | {"queries": args.queries, "seed": args.seed})
        print(f"# {n:,} done; {machine_line()[2:]}", flush=True)
    print_table(
        [
            "chunks",
            "engine",
            "upsert s",
            "disk MiB",
            "dense p50 ms",
            "dense p95 ms",
            "bm25 p50 ms",
            "bm25 p95 ms",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
