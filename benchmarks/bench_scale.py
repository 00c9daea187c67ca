"""Dense search and memory at scale: 1M synthetic chunks.

* ``dense``: one fresh process per method, so RSS is the method's own: build time, RSS, and
  p50/p95 of single queries (200 real SciFact claim vectors) over N vectors (default 1M) made
  from real SciFact vectors (a random abstract's vector plus Gaussian noise, cosine ≈ 0.9 to
  it). Methods: ragchat ``FlatIndex`` with the numpy and the FAISS scan (exact), ragchat
  ``HNSWIndex`` (hnswlib, M 32, efConstruction 200, ef 128), and FAISS ``IndexIVFFlat``
  (nlist 4·√N, trained on 64·nlist vectors; nprobe 16/64). Approximate methods report recall@10
  against the exact scan, on the synthetic vectors and on real ones (all 5,183 SciFact
  abstracts, nlist 4·√N as well).
* ``kb``: builds a real knowledge base of N synthetic chunks (texts and vectors as
  bench_peers.py makes them), then opens it in a fresh process and runs hybrid queries: open
  time, RSS, p50/p95; and ``ragchat serve`` over a data dir holding it: the server's RSS.

Vectors come from bench_peers.py's cache (run it first, or this embeds SciFact once).

Examples::

    .venv/bin/python benchmarks/bench_scale.py dense --n 1000000
    .venv/bin/python benchmarks/bench_scale.py kb --n 100000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
from _common import (
    CACHE,
    REPO,
    emit_result,
    machine_line,
    print_table,
    rss_mib,
    run_worker,
    summarise_ms,
)

SCRIPT = Path(__file__).resolve()
K = 10


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def real_vectors(backend: str) -> tuple[np.ndarray, np.ndarray, list[str], list[str], Any]:
    import bench_peers

    ids, texts, queries, _ = bench_peers.load_scifact()
    docs, qvecs = bench_peers.vectors(backend, texts, [q["text"] for q in queries])
    return docs, qvecs, ids, texts, queries


def synthetic_vectors(docs: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, docs.shape[1]), dtype=np.float32)
    sigma = math.sqrt((1 / 0.9**2 - 1) / docs.shape[1])
    step = 100_000
    for start in range(0, n, step):
        m = min(step, n - start)
        block = docs[rng.integers(0, len(docs), m)] + sigma * rng.standard_normal(
            (m, docs.shape[1]), dtype=np.float32
        )
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + m] = block
    return out


# -- dense ---------------------------------------------------------------------------------------
def _timed_queries(fn: Any, queries: np.ndarray) -> tuple[dict[str, float], list[np.ndarray]]:
    fn(queries[0])
    times, found = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(np.asarray(fn(q)))
        times.append(time.perf_counter() - t)
    return summarise_ms(times), found


def _recall(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    hits = sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth, strict=True))
    return hits / sum(len(t) for t in truth)


def _exact(vecs: np.ndarray, queries: np.ndarray) -> list[np.ndarray]:
    import faiss

    _, idx = faiss.knn(queries, vecs, K, metric=faiss.METRIC_INNER_PRODUCT)
    return list(idx)


def dense_worker(spec: dict[str, Any]) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    import faiss

    faiss.omp_set_num_threads(1)
    docs, qvecs, *_ = real_vectors(spec["backend"])
    queries = np.ascontiguousarray(qvecs[: spec["queries"]])
    vecs = synthetic_vectors(docs, spec["n"], spec["seed"])
    labels = np.arange(len(vecs), dtype=np.int64)
    method = spec["method"]
    out: dict[str, Any] = {"method": method}
    if method in ("numpy", "faiss"):
        from ragchat.vectorstores.embedded.dense import FlatIndex

        t0 = time.perf_counter()
        index = FlatIndex(vecs.shape[1], kernel=method)
        index.add(labels, vecs)
        out["build_s"] = time.perf_counter() - t0
        del vecs
        out["rss_mib"] = rss_mib()
        stats, _ = _timed_queries(lambda q: index.search(q, K)[1], queries)
        out.update(stats)
    elif method == "hnsw":
        from ragchat.vectorstores.embedded.dense import HNSWIndex

        truth = _exact(vecs, queries)
        t0 = time.perf_counter()
        index = HNSWIndex(vecs.shape[1])
        index.add(labels, vecs)
        out["build_s"] = time.perf_counter() - t0
        del vecs
        out["rss_mib"] = rss_mib()
        stats, found = _timed_queries(lambda q: index.search(q, K)[1], queries)
        out.update(stats, recall=_recall(found, truth))
        real = HNSWIndex(docs.shape[1])
        real.add(np.arange(len(docs)), docs)
        _, found = _timed_queries(lambda q: real.search(q, K)[1], qvecs)
        out["real_recall"] = _recall(found, _exact(docs, qvecs))
    else:  # ivf
        truth = _exact(vecs, queries)
        nlist = int(4 * math.sqrt(len(vecs)))
        t0 = time.perf_counter()
        index = _ivf(vecs, nlist, spec["seed"])
        out["build_s"] = time.perf_counter() - t0
        del vecs
        out["rss_mib"] = rss_mib()
        out["nlist"] = nlist
        real = _ivf(docs, int(4 * math.sqrt(len(docs))), spec["seed"])
        real_truth = _exact(docs, qvecs)
        for nprobe in spec["nprobes"]:
            index.nprobe = nprobe
            stats, found = _timed_queries(
                lambda q: index.search(q.reshape(1, -1), K)[1][0], queries
            )
            real.nprobe = nprobe
            _, real_found = _timed_queries(lambda q: real.search(q.reshape(1, -1), K)[1][0], qvecs)
            out[f"nprobe{nprobe}"] = {
                **stats,
                "recall": _recall(found, truth),
                "real_recall": _recall(real_found, real_truth),
            }
    out["peak_mib"] = peak_mib()
    return out


def _ivf(vecs: np.ndarray, nlist: int, seed: int) -> Any:
    import faiss

    quantizer = faiss.IndexFlatIP(vecs.shape[1])
    index = faiss.IndexIVFFlat(quantizer, vecs.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(seed)
    sample = vecs[rng.choice(len(vecs), min(len(vecs), 64 * nlist), replace=False)]
    index.train(np.ascontiguousarray(sample))
    index.add(vecs)
    return index


def cmd_dense(args: argparse.Namespace) -> None:
    print(machine_line())
    rows = []
    for method in args.methods.split(","):
        spec = {
            "method": method,
            "n": args.n,
            "seed": args.seed,
            "queries": args.queries,
            "backend": args.backend,
            "nprobes": [int(x) for x in args.nprobes.split(",")],
        }
        load0 = os.getloadavg()[0]
        r = run_worker(SCRIPT, spec, timeout=7200)
        load = (load0 + os.getloadavg()[0]) / 2
        print(f"# {method}: {json.dumps(r)}", file=sys.stderr, flush=True)
        if method == "ivf":
            for nprobe in spec["nprobes"]:
                s = r[f"nprobe{nprobe}"]
                rows.append(
                    [
                        f"faiss IVFFlat nlist {r['nlist']} nprobe {nprobe}",
                        r["build_s"],
                        r["rss_mib"],
                        r["peak_mib"],
                        s["p50"],
                        s["p95"],
                        s["recall"],
                        s["real_recall"],
                        load,
                    ]
                )
            continue
        label = {
            "numpy": "FlatIndex, numpy scan (exact)",
            "faiss": "FlatIndex, FAISS scan (exact)",
            "hnsw": "HNSWIndex (hnswlib M 32, efC 200, ef 128)",
        }[method]
        rows.append(
            [
                label,
                r["build_s"],
                r["rss_mib"],
                r["peak_mib"],
                r["p50"],
                r["p95"],
                r.get("recall", 1.0),
                r.get("real_recall", 1.0),
                load,
            ]
        )
    print(
        f"\n## {args.n:,} synthetic vectors (384-d), {args.queries} real claim vectors, "
        "one thread, top-10; RSS of the whole process (the synthetic matrix is freed after "
        "the build; the peak includes it)\n"
    )
    print_table(
        [
            "method",
            "build s",
            "RSS after build MiB",
            "peak RSS MiB",
            "p50 ms",
            "p95 ms",
            "recall@10 synthetic",
            "recall@10 SciFact real",
            "load avg",
        ],
        rows,
        digits=3,
    )


# -- knowledge base ------------------------------------------------------------------------------
def build_kb(args: argparse.Namespace, data: Path) -> float:
    import bench_peers

    from ragchat.types import Chunk
    from ragchat.vectorstores.base import DocumentRow
    from ragchat.vectorstores.embedded.kb import KnowledgeBase

    docs, _, ids, texts, _ = real_vectors(args.backend)
    b_ids, b_texts, b_vecs = bench_peers.synthetic(ids, texts, docs, args.n, args.seed)

    class Named:
        model_name = "sentence-transformers/all-MiniLM-L6-v2"
        dim = docs.shape[1]

    root = data / "kb"
    shutil.rmtree(root / "scale", ignore_errors=True)
    t0 = time.perf_counter()
    kb = KnowledgeBase.create(root, "scale", Named())  # type: ignore[arg-type]
    step = 50_000
    for start in range(0, len(b_ids), step):
        chunks = [
            Chunk(chunk_id=i, doc_id=i, text=t, position=0, metadata={"corpus_id": i})
            for i, t in zip(b_ids[start : start + step], b_texts[start : start + step], strict=True)
        ]
        kb.add_chunks(chunks, vectors=b_vecs[start : start + step], save=False)
        for c in chunks:  # one document per chunk, so `/query` finds the knowledge base
            kb.add_document_row(
                DocumentRow(c.doc_id, c.doc_id, "text", c.doc_id, None, 1, 0, {}, "")
            )
        print(f"# built {start + len(chunks):,}", file=sys.stderr, flush=True)
    kb.save()
    kb.close()
    return time.perf_counter() - t0


def kb_worker(spec: dict[str, Any]) -> dict[str, Any]:
    from ragchat.embed.factory import load_embedder
    from ragchat.eval.configs import BASES
    from ragchat.retrieve.factory import build_retriever
    from ragchat.settings import RetrievalSettings, Settings
    from ragchat.vectorstores.embedded.kb import KnowledgeBase

    settings = Settings(data_dir=Path(spec["data"]))
    emb = load_embedder(settings)
    before = rss_mib()
    t0 = time.perf_counter()
    kb = KnowledgeBase.open(settings.kb_root, "scale", emb)
    open_s = time.perf_counter() - t0
    after_open = rss_mib()
    retriever = build_retriever(settings, kb, RetrievalSettings(**{**BASES["hybrid"], "top_k": K}))
    import bench_peers

    _, _, queries, _ = bench_peers.load_scifact()
    times, embed = [], []
    for q in queries[: spec["queries"]]:
        res = retriever.retrieve(q["text"], top_k=K)
        times.append(res.timings["total"] / 1000)
        embed.append(res.timings.get("embed", 0.0) / 1000)
    return {
        "open_s": open_s,
        "rss_before_open": before,
        "rss_after_open": after_open,
        "rss_after_queries": rss_mib(),
        **summarise_ms(times),
        "embed_p50": summarise_ms(embed)["p50"],
    }


def server_rss(data: Path, port: int, queries: int) -> dict[str, float]:
    env = dict(os.environ, RAGCHAT_DATA_DIR=str(data), RAGCHAT_API__RATE_LIMIT_PER_MINUTE="0")
    proc = subprocess.Popen(
        [str(REPO / ".venv" / "bin" / "ragchat"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 900
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url + "/health", timeout=5).read()
                break
            except OSError:
                time.sleep(2)
        idle = rss_mib(proc.pid)
        import bench_peers

        _, _, qs, _ = bench_peers.load_scifact()
        for q in qs[:queries]:
            body = json.dumps({"question": q["text"], "kb": "scale"}).encode()
            req = urllib.request.Request(url + "/query", body, {"Content-Type": "application/json"})
            urllib.request.urlopen(req, timeout=120).read()
        return {"idle": idle, "after_queries": rss_mib(proc.pid)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def committed_files(kb_dir: Path) -> dict[str, int]:
    """Bytes of each file of the committed generation (``CURRENT`` names its folder)."""
    gen = kb_dir / (kb_dir / "CURRENT").read_text().strip()
    return {f.name: f.stat().st_size for f in sorted(gen.iterdir()) if f.is_file()}


def cmd_kb(args: argparse.Namespace) -> None:
    data = CACHE / f"scale_kb_{args.n}"
    print(machine_line())
    load0 = os.getloadavg()[0]
    reuse = args.reuse and (data / "kb" / "scale" / "CURRENT").exists()
    build_s = float("nan") if reuse else build_kb(args, data)
    files = committed_files(data / "kb" / "scale")
    size = sum(files.values()) / 2**20
    r = run_worker(SCRIPT, {"kind": "kb", "data": str(data), "queries": args.queries}, timeout=3600)
    own = r["rss_after_queries"] - r["rss_before_open"]
    rows = [
        ["build (chunk store + BM25 + dense, vectors given) s", build_s],
        ["on disk MiB (the committed generation)", size],
        *[[f"  {name}: bytes per chunk", b / args.n] for name, b in sorted(files.items())],
        ["open s (fresh process)", r["open_s"]],
        ["process RSS before open MiB (embedder loaded)", r["rss_before_open"]],
        ["process RSS after open MiB", r["rss_after_open"]],
        ["process RSS after queries MiB", r["rss_after_queries"]],
        [
            "KB's own RSS MiB (after queries - before open)",
            own,
        ],
        ["  per 100k chunks MiB", own * 1e5 / args.n],
        ["hybrid query p50 ms (embedding included)", r["p50"]],
        ["hybrid query p95 ms", r["p95"]],
        ["  of which query embedding p50 ms", r["embed_p50"]],
    ]
    if args.port:
        s = server_rss(data, args.port, args.queries)
        rows += [
            ["`ragchat serve` RSS after start MiB (+ sample KBs)", s["idle"]],
            ["`ragchat serve` RSS after queries MiB", s["after_queries"]],
        ]
    print(
        f"\n## Knowledge base of {args.n:,} synthetic chunks, {args.queries} queries; "
        f"load average {load0:.2f} → {os.getloadavg()[0]:.2f}\n"
    )
    print_table(["figure", "value"], rows)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        spec = json.loads(sys.argv[2])
        emit_result(kb_worker(spec) if spec.get("kind") == "kb" else dense_worker(spec))
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    de = sub.add_parser("dense")
    de.add_argument("--n", type=int, default=1_000_000)
    de.add_argument("--methods", default="numpy,faiss,ivf")
    de.add_argument("--nprobes", default="16,64")
    de.add_argument("--queries", type=int, default=200)
    kb = sub.add_parser("kb")
    kb.add_argument("--n", type=int, default=100_000)
    kb.add_argument("--queries", type=int, default=100)
    kb.add_argument("--port", type=int, default=0, help="also measure `ragchat serve` here")
    kb.add_argument("--reuse", action="store_true", help="keep a knowledge base already built")
    for p in (de, kb):
        p.add_argument("--seed", type=int, default=15)
        p.add_argument("--backend", default="onnx", help="vectors of bench_peers.py")
    args = ap.parse_args()
    {"dense": cmd_dense, "kb": cmd_kb}[args.cmd](args)


if __name__ == "__main__":
    main()
