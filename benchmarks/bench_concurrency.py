"""Concurrent chat turns on one engine: do they overlap, and what does a turn that arrives
while another is computing wait for its first token?

The server runs every turn on one engine event loop (``api/services/engine_loop.py``). CPU work done
inline in an async node holds that loop, so a second turn cannot even be routed until the first
one's blocking stretch ends. This runs N offline turns at once through ``ChatEngine.stream_turn``
(the sample knowledge bases, packaged embedder, no LLM, no reading-pace delay), after running
the same N one after another, and prints how much they overlap (sum of the lone turn times /
wall time of the batch; 1.0 = no overlap), how long the first token takes alone and at once,
and the longest pause between two tokens of one reply while the others compute (replies are
streamed at the product's reading pace, ``--pace-ms``).

Usage: ``.venv/bin/python benchmarks/bench_concurrency.py [--rounds 3] [--sizes 1,2,4]``.
Prints a Markdown table on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from _common import SAMPLE_QUESTIONS, sample_engine

from ragchat.agents.engine import ChatEngine
from ragchat.agents.events import TokenEvent
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions

QUESTIONS = SAMPLE_QUESTIONS[:8]  # the eight its recorded figures were measured with


GAPS: list[float] = []  # longest pause between two tokens of one turn, per streamed turn


async def one_turn(engine: ChatEngine, i: int, start: float) -> tuple[float, float]:
    """(time to first token, time to the end) from the batch start, in seconds."""
    question, agent = QUESTIONS[i % len(QUESTIONS)]
    first = None
    last = None
    gap = 0.0
    stream = engine.stream_turn(
        TurnRequest(
            question,
            user_id=f"u{i}",
            conversation=ConversationState(f"bench-{i}"),
            options=TurnOptions(agent=agent),
        )
    )
    async for event in stream:
        if isinstance(event, TokenEvent):
            now = time.perf_counter() - start
            first = now if first is None else first
            gap = max(gap, now - last) if last is not None else gap
            last = now
    end = time.perf_counter() - start
    GAPS.append(gap)
    return (first if first is not None else end), end


async def batch_of(
    engine: ChatEngine, indexes: list[int]
) -> tuple[float, list[tuple[float, float]]]:
    """The turns of ``QUESTIONS[i]`` started together: (wall, [(first token, end)])."""
    start = time.perf_counter()
    results = await asyncio.gather(*(one_turn(engine, i, start) for i in indexes))
    return time.perf_counter() - start, list(results)


async def batch(engine: ChatEngine, n: int) -> None:
    await batch_of(engine, list(range(n)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="2,4")
    parser.add_argument(
        "--pace-ms", type=float, default=12.0, help="llm.stream_pace_ms (the default is 12)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    engine = sample_engine(args.pace_ms, prefix="ragchat-bench-conc-")
    engine.warm_up()

    async def run() -> list[tuple[int, float, float, float, float, float, float]]:
        await batch(engine, len(QUESTIONS))  # warm every agent and knowledge base
        acc: dict[int, list[tuple[float, float, float, float, float, float]]] = {
            n: [] for n in sizes
        }
        for r in range(args.rounds):  # interleaved, so drifting load is shared
            for n in sizes:
                print(f"round {r + 1}: {n} turns alone, then at once", file=sys.stderr)
                alone = [(await batch_of(engine, [i]))[1][0] for i in range(n)]
                GAPS.clear()
                wall, together = await batch_of(engine, list(range(n)))
                stall = max(GAPS)
                acc[n].append(
                    (
                        sum(e for _, e in alone),
                        wall,
                        statistics.mean(f for f, _ in alone),
                        statistics.mean(f for f, _ in together),
                        max(f for f, _ in together),
                        stall,
                    )
                )
        rows = []
        for n, runs in acc.items():
            med = [statistics.median(col) for col in zip(*runs, strict=True)]
            rows.append((n, *med))
        return rows

    rows = asyncio.run(run())
    print(
        "| turns | one after another s | all at once s | overlap | first token alone s |"
        " first token at once, mean s | worst s | longest pause in a reply s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, seq, wall, first_alone, first_mean, first_worst, stall in rows:
        print(
            f"| {n} | {seq:.2f} | {wall:.2f} | {seq / wall:.2f}× | {first_alone:.2f} | "
            f"{first_mean:.2f} | {first_worst:.2f} | {stall:.2f} |"
        )


if __name__ == "__main__":
    main()
