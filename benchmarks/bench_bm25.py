"""BM25 at 100k documents: ragchat's scipy-CSC ``BM25Index`` vs bm25s (numpy and numba backends).

The collection is synthetic but made of real text: each document is a window of ``--doc-chars``
characters (default 700, ragchat's child-chunk size; 0 = the whole record) from a record drawn
with replacement from SciFact + MedQuAD (title + "\\n" + text), with a fixed seed. Queries are
real SciFact claims. All backends use the same tokenizer (bm25s's, English stopwords + PyStemmer)
and k1=1.2, b=0.75, so their scores are comparable (and checked).

Measured: index build, per-query latency (query tokenisation included) in a warm process,
cold start in fresh processes (import + load a saved index + first query; the numba backend
compiles on its first query), and the cost of appending documents (ours: ``add``; bm25s has no
append, so a full re-index). rank_bm25 is included only if it is installed.

Example::

    .venv/bin/python benchmarks/bench_bm25.py --docs 100000 --append 1000 --queries 200
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CACHE,
    doc_text,
    emit_result,
    machine_line,
    median,
    medquad_corpus,
    print_table,
    run_worker,
    scifact_corpus,
    scifact_queries,
    summarise_ms,
)

SCRIPT = Path(__file__).resolve()
K1, B, K = 1.2, 0.75, 10


class DocSampler:
    """Deterministic synthetic documents: random windows of random real records."""

    def __init__(self, seed: int, doc_chars: int) -> None:
        self.pool = [doc_text(d) for d in scifact_corpus()] + [
            doc_text(d) for d in medquad_corpus()
        ]
        self.rng = random.Random(seed)
        self.doc_chars = doc_chars

    def take(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            text = self.pool[self.rng.randrange(len(self.pool))]
            if self.doc_chars and len(text) > self.doc_chars:
                start = self.rng.randrange(len(text) - self.doc_chars + 1)
                space = text.rfind(" ", 0, start)  # start on a word boundary
                start = space + 1 if space >= 0 else 0
                text = text[start : start + self.doc_chars]
            out.append(text)
        return out


# -- backends ----------------------------------------------------------------------------------
def build_ours(texts: list[str]) -> tuple[Any, dict[str, float]]:
    import numpy as np

    from ragchat.vectorstores.bm25 import BM25Index

    idx = BM25Index(k1=K1, b=B)
    t0 = time.perf_counter()
    idx.add(np.arange(len(texts), dtype=np.int64), texts)
    t1 = time.perf_counter()
    idx._weight_matrix()  # derived lazily on the first query; forced here so it is counted
    t2 = time.perf_counter()
    return idx, {"tokenise": t1 - t0, "index": t2 - t1, "total": t2 - t0}


def build_bm25s(texts: list[str], backend: str) -> tuple[Any, dict[str, float]]:
    import bm25s

    from ragchat.vectorstores.bm25 import _STEMMER

    t0 = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False)
    t1 = time.perf_counter()
    retriever = bm25s.BM25(k1=K1, b=B, backend=backend)
    retriever.index(tokens, show_progress=False)
    t2 = time.perf_counter()
    return retriever, {"tokenise": t1 - t0, "index": t2 - t1, "total": t2 - t0, "tokens": tokens}


def query_fn(name: str, index: Any) -> Any:
    from ragchat.vectorstores.bm25 import tokenize

    if name == "ours":
        return lambda q: index.search(q, K)
    if name == "rank_bm25":
        import numpy as np

        def rank(q: str) -> Any:
            scores = index.get_scores(tokenize([q])[0])
            top = np.argpartition(-scores, K)[:K]
            return top[np.argsort(-scores[top])]

        return rank

    def bm25s_query(q: str) -> Any:
        return index.retrieve(tokenize([q]), k=K, show_progress=False)

    return bm25s_query


def latencies(fn: Any, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        out.append(time.perf_counter() - t0)
    return out


# -- cold start in a fresh process ---------------------------------------------------------------
def worker_cold(spec: dict[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    if spec["backend"] == "ours":
        from ragchat.vectorstores.bm25 import BM25Index

        t1 = time.perf_counter()
        index: Any = BM25Index.load(Path(spec["dir"]))
    else:
        import bm25s

        if spec["backend"] == "numba":
            import numba  # noqa: F401 - counted in the import time, as a real process pays it
        from ragchat.vectorstores.bm25 import tokenize  # noqa: F401

        t1 = time.perf_counter()
        index = bm25s.BM25.load(spec["dir"], backend=spec["backend"], show_progress=False)
    t2 = time.perf_counter()
    fn = query_fn("ours" if spec["backend"] == "ours" else "bm25s", index)
    queries = spec["queries"]
    times = latencies(fn, queries)
    return {
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "first_ms": times[0] * 1000,
        "second_ms": times[1] * 1000,
        "rest_p50_ms": summarise_ms(times[2:])["p50"],
    }


def cold_start(args: argparse.Namespace, ours: Any, bm: Any, queries: list[str]) -> None:
    base = CACHE / "bm25_cold"
    shutil.rmtree(base, ignore_errors=True)
    ours.save(base / "ours")
    bm.save(str(base / "bm25s"), show_progress=False)
    qs = queries
    res: dict[str, list[dict[str, Any]]] = {"ours": [], "numpy": [], "numba": []}
    for _ in range(args.cold_repeats):
        for backend in res:
            d = base / ("ours" if backend == "ours" else "bm25s")
            res[backend].append(
                run_worker(
                    SCRIPT, {"kind": "cold", "backend": backend, "dir": str(d), "queries": qs}
                )
            )
    print(
        f"## Cold start in a fresh process (median of {args.cold_repeats} processes; "
        "first query of ours includes deriving the weight matrix from the saved counts, "
        "numba's includes JIT compilation)\n"
    )
    rows = []
    for backend, rs in res.items():
        label = {"ours": "ragchat BM25Index", "numpy": "bm25s numpy", "numba": "bm25s numba"}[
            backend
        ]
        rows.append(
            [label]
            + [
                median(r[k] for r in rs)
                for k in ("import_s", "load_s", "first_ms", "second_ms", "rest_p50_ms")
            ]
        )
    print_table(
        ["backend", "import s", "load s", "1st query ms", "2nd query ms", "p50 of the rest ms"],
        rows,
    )


# -- main ------------------------------------------------------------------------------------------
def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        emit_result(worker_cold(json.loads(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--append", type=int, default=1000, help="documents appended afterwards")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--doc-chars", type=int, default=700)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over the queries")
    ap.add_argument("--append-repeats", type=int, default=3)
    ap.add_argument("--cold-repeats", type=int, default=3)
    args = ap.parse_args()

    import numpy as np

    sampler = DocSampler(args.seed, args.doc_chars)
    texts = sampler.take(args.docs)
    extra = sampler.take(args.append)
    queries = scifact_queries(args.queries)
    print(machine_line())
    print(
        f"# {args.docs:,} synthetic docs (windows of {args.doc_chars} chars of SciFact+MedQuAD "
        f"records, seed {args.seed}, mean {np.mean([len(t) for t in texts]):.0f} chars), "
        f"{len(queries)} SciFact claims, top-{K}, k1={K1} b={B}\n"
    )

    # Build.
    builds: dict[str, tuple[Any, dict[str, float]]] = {}
    builds["ours"] = build_ours(texts)
    builds["numpy"] = build_bm25s(texts, "numpy")
    builds["numba"] = build_bm25s(texts, "numba")
    rank = None
    try:
        import rank_bm25

        from ragchat.vectorstores.bm25 import tokenize

        t0 = time.perf_counter()
        rank = rank_bm25.BM25Okapi(tokenize(texts), k1=K1, b=B)
        rank_build = time.perf_counter() - t0
    except ImportError:
        rank_build = float("nan")
    ours = builds["ours"][0]
    vocab = len(ours.vocab)
    print(
        f"## Index build ({args.docs:,} docs, vocabulary {vocab:,} terms, "
        f"{ours.tf.nnz:,} postings; one build each)\n"
    )
    rows = []
    for name, label in (
        ("ours", "ragchat BM25Index"),
        ("numpy", "bm25s numpy"),
        ("numba", "bm25s numba (incl. JIT of its CSC builder)"),
    ):
        t = builds[name][1]
        rows.append([label, t["tokenise"], t["index"], t["total"]])
    rows.append(
        [
            "rank_bm25" if rank else "rank_bm25: not installed, skipped",
            rank_build,
            float("nan"),
            rank_build,
        ]
    )
    print_table(["backend", "tokenise+count s", "index/weights s", "total s"], rows)

    # Scores agree? (top-10 score lists, ours vs bm25s numpy)
    fns = {
        "ours": query_fn("ours", ours),
        "numpy": query_fn("numpy", builds["numpy"][0]),
        "numba": query_fn("numba", builds["numba"][0]),
    }
    if rank is not None:
        fns["rank_bm25"] = query_fn("rank_bm25", rank)
    worst = 0.0
    for q in queries:
        s_ours, _ = fns["ours"](q)
        s_bm = np.asarray(fns["numpy"](q).scores[0])
        n = len(s_ours)
        worst = max(worst, float(np.max(np.abs(np.sort(s_bm)[::-1][:n] - s_ours))) if n else 0.0)
    print(f"# check: max |score difference| in the top-{K}, ours vs bm25s: {worst:.2e}\n")

    # Warm per-query latency (numba's first call is the JIT: excluded here, see cold start).
    for fn in fns.values():
        fn(queries[0])
    per: dict[str, list[dict[str, float]]] = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            per[name].append(summarise_ms(latencies(fn, queries)))
    print(
        f"## Per-query latency, warm process (tokenising the query included; median of "
        f"{args.rounds} passes over {len(queries)} queries)\n"
    )
    labels = {
        "ours": "ragchat BM25Index (scipy CSC)",
        "numpy": "bm25s numpy",
        "numba": "bm25s numba",
        "rank_bm25": "rank_bm25",
    }
    rows = [
        [
            labels[n],
            median(r["p50"] for r in rs),
            median(r["p95"] for r in rs),
            median(r["mean"] for r in rs),
        ]
        for n, rs in per.items()
    ]
    if rank is None:
        rows.append(["rank_bm25: not installed, skipped", float("nan"), float("nan"), float("nan")])
    print_table(["backend", "p50 ms", "p95 ms", "mean ms"], rows, digits=3)

    # Append.
    add_s, first_s = [], []
    for _ in range(args.append_repeats):
        idx = copy.deepcopy(ours)
        t0 = time.perf_counter()
        idx.add(np.arange(args.docs, args.docs + args.append, dtype=np.int64), extra)
        t1 = time.perf_counter()
        idx.search(queries[0], K)  # re-derives the weight matrix
        t2 = time.perf_counter()
        add_s.append(t1 - t0)
        first_s.append(t2 - t1)
    ours_q = per["ours"][0]["p50"] / 1000
    _, t_numpy = build_bm25s(texts + extra, "numpy")
    print(
        f"## Append {args.append:,} docs to the {args.docs:,}-doc index "
        f"(ours: median of {args.append_repeats}; bm25s: one re-index)\n"
    )
    rows = [
        ["ragchat BM25Index.add (tokenise new docs, stack counts)", median(add_s)],
        [
            "  + first query after it (re-derive weights) minus a warm query",
            median(first_s) - ours_q,
        ],
        ["  = ragchat total", median(add_s) + median(first_s) - ours_q],
        [
            f"bm25s numpy: full re-index of {args.docs + args.append:,} docs (tokenise + index)",
            t_numpy["total"],
        ],
        ["  of which the index step alone (if old docs' tokens were kept)", t_numpy["index"]],
    ]
    print_table(["operation", "seconds"], rows, digits=3)

    cold_start(args, ours, builds["numpy"][0], queries)


if __name__ == "__main__":
    main()
