"""Readers first: query and chat latency while another user's big upload ingests, and the wait of
a small upload behind a big one (issue 18 item 2, issue 19's fair queue).

Starts ``ragchat serve`` on a fresh data directory (the sample knowledge bases are ingested at
start-up; no LLM, rate limits off, offline), then in the same run:

1. idle: ``--requests`` sequential pairs of ``POST /query`` (medical KB) and ``POST /chat``
   (a new conversation each; every question text new, so no message vector is cached),
   p50/p95; and one small Markdown upload by user B, from POST to job done;
2. user A uploads a synthetic WebVTT transcript of ``--cues`` cues (100k cues ≈ 8 MB) to the
   knowledge base ``transcripts``; while its job runs, the readers again: ``--requests`` pairs
   back to back, then one pair every ``--pace`` s until the job ends (or ``--during-budget``),
   each tagged with the job's phase (read, embed, save = the commit under the writer lock);
   beside them, user B's small upload again (``--small-kb``), from POST to done;
3. waits up to ``--wait-ingest`` seconds for A's job and prints how far it got.

``--runner thread --slots 1`` reproduces the old server (ingestion in the server process, one
FIFO job queue); the defaults are the branch's (a child process per job at idle priority,
two fair job slots). Prints Markdown tables on stdout; progress on stderr.

Usage::

    .venv/bin/python benchmarks/bench_readers.py --requests 20
    .venv/bin/python benchmarks/bench_readers.py --runner thread --slots 1 --during-budget 180 \\
        --wait-ingest 60
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from _common import REPO, pct, start_offline_server
from bench_latency import fresh_questions

_VOCAB = (
    "the patient doctor said we should look at blood pressure sleep toddler school lunch",
    "morning evening meeting project budget river mountain weather rain sunny plan next week",
    "because really think maybe report results team question answer about little more time",
)
WORDS = [word for line in _VOCAB for word in line.split()]
SMALL_NOTE = (
    b"# Quokka care\n\nQuokkas eat leaves, grasses and Guichenotia; they need little water.\n"
)


def synthetic_vtt(cues: int, seed: int = 18) -> bytes:
    """``cues`` captions of 5-8 words with two speakers, one second each (~76 bytes a cue)."""
    rng = random.Random(seed)
    lines = ["WEBVTT", ""]
    for i in range(cues):
        start, end = i, i + 1
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 8)))
        lines.append(f"{_ts(start)} --> {_ts(end)}")
        lines.append(f"<v {'Ann' if i % 7 < 4 else 'Bob'}>{text}")
        lines.append("")
    return "\n".join(lines).encode()


def _ts(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"


def start_server(src: Path, port: int, runner: str, slots: int) -> subprocess.Popen[bytes]:
    env = {
        "RAGCHAT_API__UPLOAD_MAX_BYTES": str(64 * 1024 * 1024),
        "RAGCHAT_API__INGEST_RUNNER": runner,
        "RAGCHAT_API__INGEST_SLOTS": str(slots),
    }
    proc, _data = start_offline_server(
        src, port, env, prefix="ragchat-bench-readers-", timeout_s=900
    )
    return proc


def timed_post(client: httpx.Client, path: str, body: dict[str, object]) -> float:
    start = time.perf_counter()
    r = client.post(path, json=body)
    r.raise_for_status()
    return (time.perf_counter() - start) * 1000


class Readers:
    """Sequential /query (medical KB) and /chat turns (a new conversation each), alternating;
    every question text is new (a numbered variant), so no message vector is cached."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.questions = fresh_questions()
        self.asked = 0

    def _next(self) -> tuple[str, str]:
        q, agent = self.questions[self.asked % len(self.questions)]
        self.asked += 1
        return f"{q} (case {self.asked})", agent

    def pair(self) -> tuple[float, float]:
        q, _ = self._next()
        query = timed_post(self.client, "/query", {"question": q, "kb": "medical"})
        q, agent = self._next()
        return query, timed_post(self.client, "/chat", {"message": q, "agent": agent})


def upload(client: httpx.Client, kb: str, name: str, data: bytes, kind: str) -> str:
    r = client.post(f"/kb/{kb}/documents", files=[("files", (name, data, kind))], timeout=600)
    r.raise_for_status()
    return str(r.json()["job_id"])


def job(client: httpx.Client, job_id: str) -> dict[str, object]:
    r = client.get(f"/jobs/{job_id}")
    r.raise_for_status()
    return dict(r.json())


def wait_job(client: httpx.Client, job_id: str, timeout: float) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    end = time.monotonic() + timeout
    state = job(client, job_id)
    while state["status"] not in ("done", "failed") and time.monotonic() < end:
        time.sleep(0.2)
        state = job(client, job_id)
    return time.perf_counter() - start, state


def small_upload(client: httpx.Client, kb: str, timeout: float) -> tuple[float, str]:
    start = time.perf_counter()
    job_id = upload(client, kb, "quokka.md", SMALL_NOTE, "text/markdown")
    _, state = wait_job(client, job_id, timeout)
    return time.perf_counter() - start, str(state["status"])


def row(label: str, load: str, values: list[float]) -> str:
    return f"| {label} | {load} | {len(values)} | {pct(values, 50):.0f} | {pct(values, 95):.0f} |"


def stage(state: dict[str, object]) -> str:
    """The job's phase: queued, read, embed, save (the commit, under the writer lock), done."""
    if state["status"] != "running":
        return str(state["status"])
    return str(state["message"]).split(" ")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(REPO / "src"))
    parser.add_argument("--runner", choices=("process", "thread"), default="process")
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument(
        "--requests", type=int, default=20, help="/query and /chat each: idle, and back to back"
    )
    parser.add_argument(
        "--pace", type=float, default=5.0, help="then one pair per PACE s until the job ends"
    )
    parser.add_argument("--cues", type=int, default=100_000)
    parser.add_argument("--during-budget", type=float, default=600.0, help="seconds")
    parser.add_argument("--wait-ingest", type=float, default=900.0, help="seconds")
    parser.add_argument("--port", type=int, default=8191)
    parser.add_argument("--small-kb", default="bob-busy", help="KB of B's upload during A's")
    args = parser.parse_args()

    vtt = synthetic_vtt(args.cues)
    print(f"transcript: {args.cues} cues, {len(vtt) / 1e6:.1f} MB", file=sys.stderr)
    proc = start_server(Path(args.src).resolve(), args.port, args.runner, args.slots)
    base = f"http://127.0.0.1:{args.port}"
    busy: dict[str, list[tuple[float, float]]] = {}  # job stage -> (query ms, chat ms)
    try:
        with (
            httpx.Client(base_url=base, timeout=900) as reader,
            # Two users on two addresses (the loopback proxy is trusted): uploads need an
            # identity, and one address holds at most half the job slots.
            httpx.Client(
                base_url=base, timeout=900, headers={"X-Forwarded-For": "192.0.2.1"}
            ) as alice,
            httpx.Client(
                base_url=base, timeout=900, headers={"X-Forwarded-For": "192.0.2.2"}
            ) as bob,
        ):
            for user in (alice, bob):
                user.post("/users", json={}).raise_for_status()
            turns = Readers(reader)
            for _ in range(2):  # warm every lazy import and cache
                turns.pair()
            small_upload(bob, "bob-warm", 300)
            load_idle = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print("idle readers", file=sys.stderr)
            idle = [turns.pair() for _ in range(args.requests)]
            idle_small, _ = small_upload(bob, "bob-idle", 300)

            print("uploading the transcript", file=sys.stderr)
            t_upload = time.perf_counter()
            big = upload(alice, "transcripts", "meeting.vtt", vtt, "text/vtt")
            accepted = time.perf_counter() - t_upload
            small: list[tuple[float, str]] = []
            side = threading.Thread(
                target=lambda: small.append(small_upload(bob, args.small_kb, args.wait_ingest))
            )
            side.start()  # beside the readers: with one FIFO queue it waits for the big job
            print("readers during the ingestion", file=sys.stderr)
            end = time.monotonic() + args.during_budget
            loads = []
            n = 0
            while time.monotonic() < end:
                now = stage(job(alice, big))
                if now in ("done", "failed"):
                    break
                if n >= args.requests:  # then keep sampling, paced, until the job ends
                    time.sleep(args.pace)
                busy.setdefault(now, []).append(turns.pair())
                loads.append(os.getloadavg()[0])
                n += 1
            load_busy = f"{min(loads):.1f}-{max(loads):.1f}" if loads else "n/a"
            at_end = job(alice, big)
            print("waiting for the transcript job", file=sys.stderr)
            waited, final = wait_job(alice, big, args.wait_ingest)
            ingest_s = time.perf_counter() - t_upload
            side.join(args.wait_ingest)
            busy_small, small_status = small[0] if small else (float("nan"), "unfinished")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()

    idle_q, idle_c = [q for q, _ in idle], [c for _, c in idle]
    all_busy = [p for pairs in busy.values() for p in pairs]
    busy_q, busy_c = [q for q, _ in all_busy], [c for _, c in all_busy]
    print(f"runner={args.runner} slots={args.slots} cues={args.cues} ({len(vtt) / 1e6:.1f} MB)")
    print()
    print("| readers | load (1, 5, 15 min) | n | p50 ms | p95 ms |")
    print("|---|---|---:|---:|---:|")
    print(row("/query idle", load_idle, idle_q))
    print(row("/chat idle", load_idle, idle_c))
    print(row("/query during ingestion", load_busy, busy_q))
    print(row("/chat during ingestion", load_busy, busy_c))
    for phase, pairs in busy.items():
        print(row(f"/query while the job is at {phase}", load_busy, [q for q, _ in pairs]))
        print(row(f"/chat while the job is at {phase}", load_busy, [c for _, c in pairs]))
    print()
    for label, busy, idle in (("/query", busy_q, idle_q), ("/chat", busy_c, idle_c)):
        print(f"{label} p95 during / idle: {pct(busy, 95) / pct(idle, 95):.2f}x")
    print(f"transcript upload accepted in {accepted:.1f} s")
    print(f"small upload by another user, POST to done: idle {idle_small:.1f} s, during the big")
    print(f"  ingestion {busy_small:.1f} s ({small_status})")
    print(f"big job when the readers finished: {at_end['status']} {at_end['message']}")
    print(
        f"big job at the end ({ingest_s:.0f} s after upload, waited {waited:.0f} s): "
        f"{final['status']} {final['message']}"
    )


if __name__ == "__main__":
    main()
