"""Dense search: exact top-10 (numpy vs FAISS) and HNSW recall on real MiniLM embeddings.

Subcommands:

* ``flat``: exact top-10 inner product over random unit 384-d float32 vectors (100k and 1M by
  default), one query at a time: ragchat ``FlatIndex.search`` with its numpy kernel (matmul +
  argpartition, OpenBLAS limited to 1 or 2 threads) and with its FAISS kernel (``faiss.knn``
  over the same matrix), and ``faiss.IndexFlatIP`` (``faiss.omp_set_num_threads`` 1 or 2).
* ``embed``: one-time cache of real embeddings (ragchat's embedder, all-MiniLM-L6-v2 from the
  packaged weights, title + "\\n" + text, max_seq_length 256) in /tmp/ragchat-bench. For MedQuAD
  the corpus is embedded in a seeded random order under a time budget (default 10 minutes): if
  it does not finish, the first 5,000 of that order (a seeded 5k subset) are used.
* ``hnsw``: recall@10 and latency of ragchat ``HNSWIndex`` (hnswlib, M=32, efConstruction=200,
  ef 64/128/256) and ``faiss.IndexHNSWFlat`` against exact ``FlatIndex`` search, on the cached
  embeddings, with real queries embedded by ``embed_query``.

Examples::

    .venv/bin/python benchmarks/bench_dense.py flat --sizes 100000,1000000
    .venv/bin/python benchmarks/bench_dense.py embed --corpus scifact
    .venv/bin/python benchmarks/bench_dense.py embed --corpus medquad --budget-min 10
    .venv/bin/python benchmarks/bench_dense.py hnsw --corpora scifact,medquad
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# As ragchat.runtime.prepare_runtime does in the application, before any OpenMP library loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
from _common import (
    CACHE,
    doc_text,
    machine_line,
    median,
    medquad_corpus,
    medquad_queries,
    print_table,
    scifact_corpus,
    scifact_queries,
    summarise_ms,
)

K = 10
DIM = 384


def unit_vectors(n: int, dim: int, seed: int, chunk: int = 100_000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, chunk):
        block = rng.standard_normal((min(chunk, n - start), dim), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + len(block)] = block
    return out


def per_query(fn: Any, queries: np.ndarray) -> tuple[list[float], list[np.ndarray]]:
    times, found = [], []
    for q in queries:
        t0 = time.perf_counter()
        labels = fn(q)
        times.append(time.perf_counter() - t0)
        found.append(labels)
    return times, found


def recall(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    hits = sum(len(set(map(int, f)) & set(map(int, t))) for f, t in zip(found, truth, strict=True))
    return hits / sum(len(t) for t in truth)


# -- flat --------------------------------------------------------------------------------------
def cmd_flat(args: argparse.Namespace) -> None:
    import faiss
    from threadpoolctl import threadpool_limits

    from ragchat.vectorstores.embedded.dense import FlatIndex

    print(machine_line())
    print(
        f"# exact top-{K} inner product, random unit {args.dim}-d float32 vectors (seed "
        f"{args.seed}), {args.queries} single-vector queries per pass, median of "
        f"{args.rounds} interleaved passes\n"
    )
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        vecs = unit_vectors(n, args.dim, args.seed)
        queries = unit_vectors(args.queries, args.dim, args.seed + 1)
        flat = FlatIndex(args.dim, kernel="numpy")
        t0 = time.perf_counter()
        flat.add(np.arange(n, dtype=np.int64), vecs)
        flat_build = time.perf_counter() - t0
        del vecs
        fidx = faiss.IndexFlatIP(args.dim)
        t0 = time.perf_counter()
        fidx.add(flat.vectors)
        faiss_build = time.perf_counter() - t0

        def numpy_search(q: np.ndarray, index: Any = flat) -> np.ndarray:
            index.kernel = "numpy"
            return index.search(q, K)[1]

        def kernel_search(q: np.ndarray, index: Any = flat) -> np.ndarray:
            index.kernel = "faiss"  # ragchat's default when faiss-cpu is installed
            return index.search(q, K)[1]

        def faiss_search(q: np.ndarray, index: Any = fidx) -> np.ndarray:
            return index.search(q.reshape(1, -1), K)[1][0]

        methods: dict[str, tuple[Any, Any]] = {}
        for t in [int(x) for x in args.threads.split(",")]:
            methods[f"numpy FlatIndex.search, BLAS threads {t}"] = (
                numpy_search,
                lambda t=t: threadpool_limits(limits=t, user_api="blas"),
            )
            methods[f"ragchat FlatIndex.search (FAISS kernel), omp threads {t}"] = (
                kernel_search,
                lambda t=t: _faiss_threads(faiss, t),
            )
            methods[f"faiss IndexFlatIP, omp threads {t}"] = (
                faiss_search,
                lambda t=t: _faiss_threads(faiss, t),
            )
        stats: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
        truth: list[np.ndarray] | None = None
        agree = 1.0
        for _ in range(args.rounds):
            for name, (fn, limit) in methods.items():
                with limit():
                    fn(queries[0])  # warm-up
                    times, found = per_query(fn, queries)
                stats[name].append(summarise_ms(times))
                if truth is None:
                    truth = found
                else:
                    agree = min(agree, recall(found, truth))
        for name, st in stats.items():
            rows.append(
                [
                    n,
                    name,
                    median(s["p50"] for s in st),
                    median(s["p95"] for s in st),
                    median(s["mean"] for s in st),
                    faiss_build if "faiss" in name else flat_build,
                ]
            )
        print(
            f"# {n:,}: top-{K} overlap between all methods and numpy: {agree:.4f}",
            file=sys.stderr,
            flush=True,
        )
        print(f"# n={n:,}: top-{K} sets agree across methods (min overlap {agree:.4f})")
        del flat, fidx
    print()
    print_table(["vectors", "method", "p50 ms", "p95 ms", "mean ms", "add s"], rows)


class _faiss_threads:
    def __init__(self, faiss: Any, n: int) -> None:
        self.faiss, self.n = faiss, n

    def __enter__(self) -> None:
        self.old = self.faiss.omp_get_max_threads()
        self.faiss.omp_set_num_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        self.faiss.omp_set_num_threads(self.old)


# -- embeddings cache ----------------------------------------------------------------------------
def _paths(corpus: str) -> dict[str, Path]:
    return {
        "docs": CACHE / f"{corpus}_vecs.npy",
        "ids": CACHE / f"{corpus}_ids.json",
        "queries": CACHE / f"{corpus}_qvecs.npy",
        "meta": CACHE / f"{corpus}_meta.json",
    }


def _embedder(threads: int) -> Any:
    from ragchat.embed.factory import load_embedder
    from ragchat.settings import EmbeddingSettings, Settings

    return load_embedder(Settings(embedding=EmbeddingSettings(threads=threads)))


def cmd_embed(args: argparse.Namespace) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    paths = _paths(args.corpus)
    emb = _embedder(args.threads)
    if args.corpus == "scifact":
        docs = scifact_corpus()
        queries = scifact_queries(args.queries)
    else:
        docs = medquad_corpus()
        qs = medquad_queries()
        queries = random.Random(args.seed).sample(qs, min(args.queries, len(qs)))
    order = list(range(len(docs)))
    if args.corpus == "medquad":
        random.Random(args.seed).shuffle(order)  # a prefix of this order is a seeded subset
    texts = [doc_text(docs[i]) for i in order]
    budget = args.budget_min * 60 if args.corpus == "medquad" else float("inf")
    parts, done, t0 = [], 0, time.perf_counter()
    # Past the budget, go on only until the fallback subset is complete.
    while done < len(texts) and (time.perf_counter() - t0 < budget or done < args.fallback_docs):
        batch = texts[done : done + args.chunk]
        parts.append(emb.embed_documents(batch))
        done += len(batch)
        print(
            f"# {args.corpus}: {done:,}/{len(texts):,} docs, {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    elapsed = time.perf_counter() - t0
    vecs = np.concatenate(parts)
    complete = done == len(texts)
    if not complete:
        keep = min(args.fallback_docs, len(vecs))
        vecs = vecs[:keep]
    ids = [docs[i]["_id"] for i in order[: len(vecs)]]
    tq = time.perf_counter()
    qvecs = np.stack([emb.embed_query(q) for q in queries])
    q_elapsed = time.perf_counter() - tq
    np.save(paths["docs"], vecs)
    np.save(paths["queries"], qvecs)
    paths["ids"].write_text(json.dumps(ids))
    meta = {
        "corpus": args.corpus,
        "docs_total": len(docs),
        "docs_embedded": done,
        "docs_kept": len(vecs),
        "complete": complete,
        "seconds": elapsed,
        "docs_per_s": done / elapsed,
        "queries": len(queries),
        "query_seconds": q_elapsed,
        "threads": args.threads,
        "budget_min": args.budget_min if budget != float("inf") else None,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }
    paths["meta"].write_text(json.dumps(meta, indent=1))
    print(machine_line())
    print_table(
        [
            "corpus",
            "docs",
            "embedded",
            "kept",
            "complete",
            "seconds",
            "docs/s",
            "torch threads",
            "queries",
        ],
        [
            [
                args.corpus,
                len(docs),
                done,
                len(vecs),
                "yes" if complete else "no",
                elapsed,
                done / elapsed,
                args.threads,
                len(queries),
            ]
        ],
    )


# -- hnsw ------------------------------------------------------------------------------------------
def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=0)


def cmd_hnsw(args: argparse.Namespace) -> None:
    import faiss
    from threadpoolctl import threadpool_limits

    from ragchat.vectorstores.embedded.dense import FlatIndex, HNSWIndex

    faiss.omp_set_num_threads(1)
    efs = [int(x) for x in args.ef.split(",")]
    print(machine_line())
    print(
        f"# recall@{K} vs exact FlatIndex; M={args.m}, efConstruction={args.ef_construction}; "
        f"single-query latency, 1 thread (faiss omp 1, hnswlib 1, OpenBLAS 1 unless the row "
        f"says otherwise), median of {args.rounds} passes\n"
    )
    for corpus in args.corpora.split(","):
        paths = _paths(corpus)
        if not paths["docs"].exists():
            print(
                f"# {corpus}: no cached embeddings; run "
                f"`bench_dense.py embed --corpus {corpus}` first\n"
            )
            continue
        meta = json.loads(paths["meta"].read_text())
        vecs = np.load(paths["docs"])
        queries = np.load(paths["queries"])
        labels = np.arange(len(vecs), dtype=np.int64)
        subset = (
            ""
            if meta["complete"]
            else (
                f" (seeded subset: embedding all {meta['docs_total']:,} did not finish in "
                f"{meta['budget_min']} min)"
            )
        )
        print(f"## {corpus}: {len(vecs):,} docs{subset}, {len(queries)} real queries\n")

        flat = FlatIndex(DIM)
        flat.add(labels, vecs)
        t0 = time.perf_counter()
        hnsw = HNSWIndex(DIM, m=args.m, ef_construction=args.ef_construction)
        hnsw.add(labels, vecs)
        hnsw_build = time.perf_counter() - t0
        fh = faiss.IndexHNSWFlat(DIM, args.m, faiss.METRIC_INNER_PRODUCT)
        fh.hnsw.efConstruction = args.ef_construction
        t0 = time.perf_counter()
        fh.add(vecs)
        faiss_build = time.perf_counter() - t0

        exact = "exact FlatIndex (numpy, BLAS 1 thread)"
        default_blas = f"exact FlatIndex (numpy, BLAS default: {_blas_threads()} threads)"
        methods: dict[str, Any] = {
            exact: lambda q, index=flat: index.search(q, K)[1],
            default_blas: lambda q, index=flat: index.search(q, K)[1],
        }
        builds = {exact: float("nan"), default_blas: float("nan")}
        for ef in efs:

            def ours(q: np.ndarray, ef: int = ef, index: Any = hnsw) -> np.ndarray:
                index.ef = ef
                return index.search(q, K)[1]

            def theirs(q: np.ndarray, ef: int = ef, index: Any = fh) -> np.ndarray:
                index.hnsw.efSearch = ef
                return index.search(q.reshape(1, -1), K)[1][0]

            methods[f"ragchat HNSWIndex (hnswlib) ef={ef}"] = ours
            builds[f"ragchat HNSWIndex (hnswlib) ef={ef}"] = hnsw_build
            methods[f"faiss IndexHNSWFlat ef={ef}"] = theirs
            builds[f"faiss IndexHNSWFlat ef={ef}"] = faiss_build
        stats: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
        recalls: dict[str, float] = {}
        truth: list[np.ndarray] = []
        for _ in range(args.rounds):
            for name, fn in methods.items():
                # Everything but the "BLAS default" row runs with OpenBLAS limited to 1 thread.
                limit = None if name == default_blas else 1
                with threadpool_limits(limits=limit, user_api="blas"):
                    fn(queries[0])
                    times, found = per_query(fn, queries)
                stats[name].append(summarise_ms(times))
                if name == exact:
                    truth = found
                recalls[name] = recall(found, truth)
        rows = [
            [
                name,
                recalls[name],
                median(s["p50"] for s in st),
                median(s["p95"] for s in st),
                builds[name],
            ]
            for name, st in stats.items()
        ]
        print_table(
            [f"method ({corpus})", f"recall@{K}", "p50 ms", "p95 ms", "build s"], rows, digits=3
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    fl = sub.add_parser("flat", help="exact search over random vectors")
    fl.add_argument("--sizes", default="100000,1000000")
    fl.add_argument("--dim", type=int, default=DIM)
    fl.add_argument("--queries", type=int, default=200)
    fl.add_argument("--rounds", type=int, default=3)
    fl.add_argument("--threads", default="1,2", help="BLAS / OpenMP thread counts to compare")
    fl.add_argument("--seed", type=int, default=7)
    em = sub.add_parser("embed", help="cache real embeddings (one-time)")
    em.add_argument("--corpus", choices=["scifact", "medquad"], required=True)
    em.add_argument("--threads", type=int, default=2, help="torch threads for the embedding")
    em.add_argument("--queries", type=int, default=500)
    em.add_argument("--chunk", type=int, default=256, help="docs per embed_documents call")
    em.add_argument("--budget-min", type=float, default=10.0, help="MedQuAD time budget")
    em.add_argument("--fallback-docs", type=int, default=5000)
    em.add_argument("--seed", type=int, default=11)
    hn = sub.add_parser("hnsw", help="HNSW recall and latency on cached embeddings")
    hn.add_argument("--corpora", default="scifact,medquad")
    hn.add_argument("--m", type=int, default=32)
    hn.add_argument("--ef-construction", type=int, default=200)
    hn.add_argument("--ef", default="64,128,256")
    hn.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    {"flat": cmd_flat, "embed": cmd_embed, "hnsw": cmd_hnsw}[args.cmd](args)


if __name__ == "__main__":
    main()
