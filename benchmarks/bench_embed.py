"""Embedding speed of all-MiniLM-L6-v2 (packaged weights) through ``ragchat.embed.factory``.

Two measurements, each configuration in a fresh subprocess so that torch's thread count and
``OMP_WAIT_POLICY`` are in place before torch (and its libgomp) load:

* ``latency``: single-query ``embed_query`` latency (p50/p95 over real SciFact claims), torch
  threads x OMP_WAIT_POLICY (PASSIVE / unset), optionally with N busy-looping processes running
  alongside (``--busy 0,1``) to imitate a machine shared with other work.
* ``throughput``: docs/s embedding SciFact abstracts (title + "\\n" + text, max_seq_length 256),
  torch threads x batch size x order. ``sorted`` is the real code path
  (``embed_documents``, length-sorted); ``unsorted`` feeds consecutive file-order batches to
  ``encode`` one batch at a time, which is what you get when callers batch unsorted texts.

Examples::

    .venv/bin/python benchmarks/bench_embed.py latency --repeats 3 --busy 0,1
    .venv/bin/python benchmarks/bench_embed.py throughput --threads 1 --batch-sizes 32 \\
        --orders sorted --docs 2000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Spinners,
    doc_text,
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


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _load(threads: int, batch_size: int = 32) -> tuple[Any, float]:
    # torch (and so libgomp, which reads OMP_WAIT_POLICY once, when it loads) is imported here,
    # before load_embedder's prepare_runtime() could setdefault the variable: "unset" stays unset.
    import torch  # noqa: F401

    from ragchat.embed.factory import load_embedder
    from ragchat.settings import EmbeddingSettings, Settings

    t0 = time.perf_counter()
    emb = load_embedder(
        Settings(embedding=EmbeddingSettings(threads=threads, batch_size=batch_size))
    )
    return emb, time.perf_counter() - t0


def worker_latency(spec: dict[str, Any]) -> dict[str, Any]:
    policy_at_import = os.environ.get("OMP_WAIT_POLICY", "<unset>")
    emb, load_s = _load(spec["threads"])
    import torch

    queries = scifact_queries(spec["queries"])
    for q in queries[: spec["warmup"]]:
        emb.embed_query(q)
    times = []
    load0, cpu0, wall0 = loadavg1(), _cpu_seconds(), time.perf_counter()
    for q in queries:
        t0 = time.perf_counter()
        emb.embed_query(q)
        times.append(time.perf_counter() - t0)
    wall = time.perf_counter() - wall0
    return {
        **summarise_ms(times),
        "load_s": load_s,
        "torch_threads": torch.get_num_threads(),
        "omp_wait_policy": policy_at_import,
        "cpu_per_wall": (_cpu_seconds() - cpu0) / wall,
        "loadavg": (load0 + loadavg1()) / 2,
    }


def _padding_efficiency(model: Any, batches: list[list[str]], max_len: int) -> float:
    tok = model.tokenizer
    real = padded = 0
    for batch in batches:
        lens = [min(len(ids), max_len) for ids in tok(batch, truncation=False)["input_ids"]]
        real += sum(lens)
        padded += max(lens) * len(lens)
    return real / padded


def worker_throughput(spec: dict[str, Any]) -> dict[str, Any]:
    emb, load_s = _load(spec["threads"], spec["batch"])
    import torch

    texts = [doc_text(d) for d in scifact_corpus(spec["docs"])]
    bs = spec["batch"]
    model = emb._model
    # Warm-up (first forward passes allocate and pick kernels); not timed.
    emb.embed_documents(texts[:bs])

    if spec["order"] == "sorted":
        run = lambda: emb.embed_documents(texts)  # noqa: E731 - the real code path
        by_len = sorted(texts, key=len, reverse=True)  # as sentence-transformers batches them
        batches = [by_len[i : i + bs] for i in range(0, len(by_len), bs)]
    else:
        batches = [texts[i : i + bs] for i in range(0, len(texts), bs)]

        def run() -> None:
            for batch in batches:
                model.encode(
                    batch,
                    batch_size=len(batch),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )

    load0, cpu0, t0 = loadavg1(), _cpu_seconds(), time.perf_counter()
    run()
    wall = time.perf_counter() - t0
    return {
        "docs_per_s": len(texts) / wall,
        "wall_s": wall,
        "load_s": load_s,
        "torch_threads": torch.get_num_threads(),
        "cpu_per_wall": (_cpu_seconds() - cpu0) / wall,
        "loadavg": (load0 + loadavg1()) / 2,
        "pad_eff": _padding_efficiency(model, batches, model.max_seq_length),
    }


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _policy_env(policy: str) -> dict[str, str | None]:
    return {"OMP_WAIT_POLICY": "PASSIVE" if policy == "passive" else None}


def main_latency(args: argparse.Namespace) -> None:
    configs = [
        (busy, t, p)
        for busy in _ints(args.busy)
        for t in _ints(args.threads)
        for p in args.policies.split(",")
    ]
    results: dict[tuple[int, int, str], list[dict[str, Any]]] = {c: [] for c in configs}
    # Repeats are interleaved (round-robin over configurations) so drifting load on the shared
    # machine spreads over all of them instead of hitting one.
    for rep in range(args.repeats):
        for busy, threads, policy in configs:
            spec = {
                "kind": "latency",
                "threads": threads,
                "queries": args.queries,
                "warmup": args.warmup,
            }
            with Spinners(busy):
                res = run_worker(SCRIPT, spec, _policy_env(policy))
            results[(busy, threads, policy)].append(res)
            print(
                f"# rep {rep + 1} busy={busy} threads={threads} policy={policy}: "
                f"p50 {res['p50']:.2f} ms p95 {res['p95']:.2f} ms "
                f"(load avg {res['loadavg']:.2f})",
                file=sys.stderr,
                flush=True,
            )
    print(machine_line())
    print(
        f"# embed_query latency over {args.queries} SciFact claims, {args.warmup} warm-up, "
        f"{args.repeats} fresh processes per row; figures are medians over the processes "
        f"(p50 range in brackets)\n"
    )
    rows = []
    for (busy, threads, policy), res in results.items():
        p50s = [r["p50"] for r in res]
        rows.append(
            [
                busy,
                threads,
                "PASSIVE" if policy == "passive" else "unset",
                median(p50s),
                f"[{min(p50s):.1f}-{max(p50s):.1f}]",
                median(r["p95"] for r in res),
                median(r["mean"] for r in res),
                median(r["cpu_per_wall"] for r in res),
                median(r["load_s"] for r in res),
                median(r["loadavg"] for r in res),
            ]
        )
    print_table(
        [
            "busy procs",
            "threads",
            "OMP_WAIT_POLICY",
            "p50 ms",
            "p50 range",
            "p95 ms",
            "mean ms",
            "CPU/wall",
            "model load s",
            "load avg",
        ],
        rows,
    )


def main_throughput(args: argparse.Namespace) -> None:
    configs = [
        (t, b, o)
        for t in _ints(args.threads)
        for b in _ints(args.batch_sizes)
        for o in args.orders.split(",")
    ]
    results: dict[tuple[int, int, str], list[dict[str, Any]]] = {c: [] for c in configs}
    for rep in range(args.repeats):
        for threads, batch, order in configs:
            spec = {
                "kind": "throughput",
                "threads": threads,
                "batch": batch,
                "order": order,
                "docs": args.docs,
            }
            res = run_worker(SCRIPT, spec, _policy_env("passive"))
            results[(threads, batch, order)].append(res)
            print(
                f"# rep {rep + 1} threads={threads} batch={batch} {order}: "
                f"{res['docs_per_s']:.1f} docs/s (load avg {res['loadavg']:.2f})",
                file=sys.stderr,
                flush=True,
            )
    print(machine_line())
    print(
        f"# embed {args.docs} SciFact abstracts (title+text, max_seq_length 256), "
        f"OMP_WAIT_POLICY=PASSIVE, {args.repeats} fresh process(es) per row, medians\n"
    )
    rows = []
    for (threads, batch, order), res in results.items():
        rows.append(
            [
                threads,
                batch,
                order,
                median(r["docs_per_s"] for r in res),
                median(r["wall_s"] for r in res),
                median(r["pad_eff"] for r in res),
                median(r["cpu_per_wall"] for r in res),
                median(r["docs_per_s"] / r["cpu_per_wall"] for r in res),
                median(r["loadavg"] for r in res),
            ]
        )
    print_table(
        [
            "threads",
            "batch",
            "order",
            "docs/s",
            "wall s",
            "real/padded tokens",
            "CPU/wall",
            "docs per CPU-s",
            "load avg",
        ],
        rows,
    )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        spec = json.loads(sys.argv[2])
        fn = worker_latency if spec["kind"] == "latency" else worker_throughput
        emit_result(fn(spec))
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="mode", required=True)
    lat = sub.add_parser("latency", help="single-query latency")
    lat.add_argument("--queries", type=int, default=200)
    lat.add_argument("--warmup", type=int, default=10)
    lat.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    lat.add_argument(
        "--policies",
        default="passive,unset",
        help="OMP_WAIT_POLICY values to compare: passive and/or unset",
    )
    lat.add_argument(
        "--busy", default="0", help="comma-separated counts of busy-looping processes run alongside"
    )
    lat.add_argument("--repeats", type=int, default=3, help="fresh processes per configuration")
    thr = sub.add_parser("throughput", help="document embedding throughput")
    thr.add_argument("--docs", type=int, default=2000)
    thr.add_argument("--threads", default="1,2")
    thr.add_argument("--batch-sizes", default="16,32,64")
    thr.add_argument("--orders", default="sorted,unsorted")
    thr.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    if args.mode == "latency":
        main_latency(args)
    else:
        main_throughput(args)


if __name__ == "__main__":
    main()
