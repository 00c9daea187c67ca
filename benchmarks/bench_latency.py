"""Latency of the offline answer path, as ratios to one query embedding measured in the same run.

For each source tree given (``--tree NAME=PATH/src``; default: this checkout), starts
``ragchat serve`` from that tree on a fresh data directory (the sample knowledge bases are
ingested at start-up; no LLM, rate limits off), then measures:

- one query embedding: ``embed_query`` of the benchmark questions in this process (packaged
  model), median, measured right before the server's turns so both see the same load;
- sequential offline ``POST /chat`` turns (a new conversation each), p50/p95;
- ``--concurrent`` ``POST /chat/stream`` requests started at once, time to the first ``token``
  event, p50/p95 over ``--rounds`` rounds;

each twice: with "fresh" questions (every one asked once in the run, so no message is found
in a cache; the chunks they retrieve recur, as on a server that has been answering for a
while) and with "repeated" ones (the ten warm-up questions again: the best case for caches),
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
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from _common import REPO, SAMPLE_QUESTIONS, pct, start_offline_server

QUESTIONS = SAMPLE_QUESTIONS

# Questions asked once each in the measured turns, so no turn finds its message cached; the
# chunks they retrieve recur, as on a server that has been answering for a while.
_MEDICAL = [
    "ibuprofen",
    "acetaminophen",
    "amoxicillin",
    "the common cold",
    "high blood pressure",
    "migraine",
    "hay fever",
    "type 2 diabetes",
]
_MEDICAL_ASKS = [
    "Tell me about {}.",
    "What should I know about {}?",
    "What are the risks of {}?",
    "Is {} a concern for children?",
    "When should I see a doctor about {}?",
    "Give me the key facts about {}.",
    "What makes {} worse?",
    "How do people usually manage {}?",
]
_PARENTING = ["toddler sleep", "bedtime routines", "tantrums", "naps", "night waking"]
_PARENTING_ASKS = [
    "Any advice on {}?",
    "What do experts say about {}?",
    "How should I handle {}?",
    "What is normal for {}?",
]
_TUTOR = ["the heart", "the lungs", "digestion", "cells", "alveoli", "red blood cells"]
_TUTOR_ASKS = ["Explain {} to me.", "How does {} work?", "What is the role of {}?"]


def fresh_questions() -> list[tuple[str, str]]:
    out = [(a.format(s), "medical") for s in _MEDICAL for a in _MEDICAL_ASKS]
    out += [(a.format(s), "parenting") for s in _PARENTING for a in _PARENTING_ASKS]
    out += [(a.format(s), "tutor") for s in _TUTOR for a in _TUTOR_ASKS]
    random.Random(9).shuffle(out)
    return out


@dataclass
class Row:
    tree: str
    questions: str  # "fresh" or "repeated"
    load: str
    embed_ms: float
    turns: list[float]
    firsts: list[float]


def uptime() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def measure_embedding(repeats: int = 3) -> float:
    """Median milliseconds of one ``embed_query`` (the packaged model, one thread as served)."""
    from ragchat.embed.factory import load_embedder
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
    return start_offline_server(
        src, port, {"RAGCHAT_API__MAX_CONCURRENT_STREAMS": "64"}, prefix="ragchat-bench-lat-"
    )


async def chat_turn(client: httpx.AsyncClient, question: str, agent: str) -> float:
    start = time.perf_counter()
    r = await client.post("/chat", json={"message": question, "agent": agent})
    r.raise_for_status()
    return (time.perf_counter() - start) * 1000


async def first_token(client: httpx.AsyncClient, question: str, agent: str) -> float:
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


async def run_tree(
    port: int, turns: int, concurrent: int, rounds: int
) -> tuple[list[float], list[float], list[float], list[float]]:
    """(fresh turns, repeated turns, fresh first tokens, repeated first tokens) in ms."""
    fresh = iter(fresh_questions())
    limits = httpx.Limits(max_connections=concurrent + 4)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=300, limits=limits
    ) as client:
        for q, agent in QUESTIONS:  # warm every agent, KB and lazy import
            await chat_turn(client, q, agent)
        seq_fresh = [await chat_turn(client, *next(fresh)) for _ in range(turns)]
        repeated = [QUESTIONS[i % len(QUESTIONS)] for i in range(max(turns, concurrent))]
        seq_repeat = [await chat_turn(client, q, a) for q, a in repeated[:turns]]
        first_fresh: list[float] = []
        first_repeat: list[float] = []
        for r in range(rounds):
            print(f"  round {r + 1}: {concurrent} streams at once, twice", file=sys.stderr)
            batch = [next(fresh, QUESTIONS[0]) for _ in range(concurrent)]
            first_fresh += await asyncio.gather(*(first_token(client, q, a) for q, a in batch))
            batch = repeated[:concurrent]
            first_repeat += await asyncio.gather(*(first_token(client, q, a) for q, a in batch))
    return seq_fresh, seq_repeat, first_fresh, first_repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], help="NAME=PATH/src (repeat)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=8190)
    args = parser.parse_args()
    trees = [t.split("=", 1) for t in args.tree] or [["this", str(REPO / "src")]]

    rows: list[Row] = []
    for name, src in trees:
        print(f"{name}: starting the server from {src}", file=sys.stderr)
        proc, _data = start_server(Path(src).resolve(), args.port)
        try:
            embed_ms = measure_embedding()
            load = uptime()
            fresh, repeat, first_fresh, first_repeat = asyncio.run(
                run_tree(args.port, args.turns, args.concurrent, args.rounds)
            )
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        rows.append(Row(name, "fresh", load, embed_ms, fresh, first_fresh))
        rows.append(Row(name, "repeated", load, embed_ms, repeat, first_repeat))

    print(
        "| tree | questions | load (1, 5, 15 min) | one query embedding ms | /chat p50 ms |"
        f" /chat p95 ms | {args.concurrent} streams first token p50 ms | p95 ms |"
        " turn p95 / embedding | first-token p95 / embedding |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        t95, f95 = pct(r.turns, 95), pct(r.firsts, 95)
        print(
            f"| {r.tree} | {r.questions} | {r.load} | {r.embed_ms:.1f} |"
            f" {pct(r.turns, 50):.0f} | {t95:.0f} | {pct(r.firsts, 50):.0f} | {f95:.0f} |"
            f" {t95 / r.embed_ms:.1f}× | {f95 / r.embed_ms:.0f}× |"
        )


if __name__ == "__main__":
    main()
