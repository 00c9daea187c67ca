"""Latency of the offline answer path, as ratios to one query embedding measured in the same run.

For each source tree given (``--tree NAME=PATH/src``; default: this checkout), starts
``ragchat serve`` from that tree on a fresh data directory (the sample knowledge bases are
ingested at start-up; no LLM, rate limits off), then measures:

- one query embedding: ``embed_query`` of the benchmark questions in this process (packaged
  model), median, measured right before the server's turns so both see the same load;
- sequential offline ``POST /chat`` turns (a new conversation each, the sample questions of
  every agent), p50/p95;
- ``--concurrent`` ``POST /chat/stream`` requests started at once, time to the first ``token``
  event, p50/p95 over ``--rounds`` rounds.

and prints the two ratios the fast answer path is judged by: turn p95 / one query embedding and
concurrent first-token p95 / one query embedding. Trees run one after another (never two
servers at once), so compare ratios within one run; absolute times move with the machine's
load, printed with every tree.

Usage::

    .venv/bin/python benchmarks/bench_latency.py                       # this checkout
    .venv/bin/python benchmarks/bench_latency.py --tree base=/tmp/base/src --tree branch=src

Prints a Markdown table on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from _common import REPO, pct

QUESTIONS = [
    ("What are the side effects of ibuprofen?", "medical"),
    ("How much sleep does a toddler need?", "parenting"),
    ("How is cardiac output calculated?", "tutor"),
    ("Can I take amoxicillin if I am allergic to penicillin?", "medical"),
    ("What should I do about tantrums at bedtime?", "parenting"),
    ("What does bile do in digestion?", "tutor"),
    ("What is a normal blood pressure?", "medical"),
    ("When do babies start to crawl?", "parenting"),
    ("What helps with hay fever?", "medical"),
    ("Why are alveoli well suited to gas exchange?", "tutor"),
]


@dataclass
class TreeResult:
    name: str
    load: str
    embed_ms: float
    turn_p50: float
    turn_p95: float
    first_p50: float
    first_p95: float


def uptime() -> str:
    return os.getloadavg().__repr__()


def measure_embedding(repeats: int = 3) -> float:
    """Median milliseconds of one ``embed_query`` (the packaged model, one thread as served)."""
    from ragchat.index.embedder import load_embedder
    from ragchat.settings import Settings

    emb = load_embedder(Settings(data_dir=Path(tempfile.mkdtemp(prefix="ragchat-bench-lat-"))))
    emb.embed_query("warm up")
    times = []
    for _ in range(repeats):
        for q, _agent in QUESTIONS:
            start = time.perf_counter()
            emb.embed_query(q)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def start_server(src: Path, port: int) -> tuple[subprocess.Popen[bytes], Path]:
    data = Path(tempfile.mkdtemp(prefix="ragchat-bench-lat-"))
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(src),
        RAGCHAT_DATA_DIR=str(data),
        RAGCHAT_API__RATE_LIMIT_PER_MINUTE="0",
        RAGCHAT_API__RATE_LIMIT_PER_IP_PER_MINUTE="0",
        RAGCHAT_API__MAX_CONCURRENT_STREAMS="64",
        RAGCHAT_API__SESSION_CLEANUP_INTERVAL_S="3600",
        RAGCHAT_LLM__BACKEND="none",
        RAGCHAT_LOG_LEVEL="WARNING",
    )
    cmd = [
        sys.executable,
        "-c",
        "from ragchat.cli import main; main()",
        "serve",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(cmd, env=env, cwd=data, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server from {src} exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc, data
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit(f"server from {src} did not start")


async def chat_turn(client: httpx.AsyncClient, i: int) -> float:
    question, agent = QUESTIONS[i % len(QUESTIONS)]
    start = time.perf_counter()
    r = await client.post("/chat", json={"message": question, "agent": agent})
    r.raise_for_status()
    return (time.perf_counter() - start) * 1000


async def first_token(client: httpx.AsyncClient, i: int) -> float:
    question, agent = QUESTIONS[i % len(QUESTIONS)]
    start = time.perf_counter()
    first = None
    async with client.stream(
        "POST", "/chat/stream", json={"message": question, "agent": agent}
    ) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if first is None and line.strip() == "event: token":
                first = (time.perf_counter() - start) * 1000
    return first if first is not None else (time.perf_counter() - start) * 1000


async def run_tree(port: int, turns: int, concurrent: int, rounds: int) -> tuple[list, list]:
    limits = httpx.Limits(max_connections=concurrent + 4)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits
    ) as client:
        for i in range(len(QUESTIONS)):  # warm every agent, KB and lazy import
            await chat_turn(client, i)
        seq = [await chat_turn(client, i) for i in range(turns)]
        firsts: list[float] = []
        for r in range(rounds):
            print(f"  round {r + 1}: {concurrent} streams at once", file=sys.stderr)
            firsts += await asyncio.gather(*(first_token(client, i) for i in range(concurrent)))
    return seq, firsts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], help="NAME=PATH/src (repeat)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=8190)
    args = parser.parse_args()
    trees = [t.split("=", 1) for t in args.tree] or [["this", str(REPO / "src")]]

    results: list[TreeResult] = []
    for name, src in trees:
        print(f"{name}: starting the server from {src}", file=sys.stderr)
        proc, _data = start_server(Path(src).resolve(), args.port)
        try:
            embed_ms = measure_embedding()
            load = uptime()
            seq, firsts = asyncio.run(run_tree(args.port, args.turns, args.concurrent, args.rounds))
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        results.append(
            TreeResult(
                name,
                load,
                embed_ms,
                pct(seq, 50),
                pct(seq, 95),
                pct(firsts, 50),
                pct(firsts, 95),
            )
        )

    print(
        "| tree | load (1, 5, 15 min) | one query embedding ms | /chat p50 ms | /chat p95 ms |"
        f" {args.concurrent} streams first token p50 ms | p95 ms |"
        " turn p95 / embedding | first-token p95 / embedding |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.name} | {r.load} | {r.embed_ms:.1f} | {r.turn_p50:.0f} | {r.turn_p95:.0f} |"
            f" {r.first_p50:.0f} | {r.first_p95:.0f} | {r.turn_p95 / r.embed_ms:.1f}× |"
            f" {r.first_p95 / r.embed_ms:.0f}× |"
        )


if __name__ == "__main__":
    main()
