"""A small upload's time to done, alone and beside crafted uploads (issue 27).

The attack: a ~16 KB PDF whose 20 pages share one 6 MB content stream (``shared_stream_pdf``
of ``tests/ingest/conftest.py``: ~20 s of CPU per page to extract). Two such uploads from
two fresh identities held both upload slots for the whole flat 120 s parse limit, and a third
user's 30-byte Markdown upload waited 121 s.

Starts ``ragchat serve`` (the source tree ``--src``: this branch, or main for the "before"
figure) on a fresh data directory, offline, rate limits off, default ingestion (a child
process per job, two fair slots), then for ``--runs`` rounds:

1. alone: Carol (address 198.51.100.2) uploads ``quokka.md`` (30 bytes) to ``notes``;
2. one attacker address: two fresh identities from 203.0.113.5 each upload the crafted PDF
   to ``attack``; once both are accepted, Carol uploads again;
3. two attacker addresses: the same from 203.0.113.5 and 203.0.113.6.

Client addresses are passed as ``X-Forwarded-For`` (the server trusts loopback as a proxy).
Each row: Carol's time from POST to ``done`` and how the crafted jobs ended (their time and
message). Prints a Markdown table on stdout; progress on stderr.

Usage::

    .venv/bin/python benchmarks/bench_upload_attack.py --runs 3
    .venv/bin/python benchmarks/bench_upload_attack.py --src ../main/src --runs 1 --scenarios 2
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import httpx
from _common import REPO, start_offline_server

SMALL = b"# Quokkas\n\nQuokkas eat leaves.\n"
CAROL = "198.51.100.2"


def crafted_pdf() -> bytes:
    """The test suite's builder, so the benchmark and the test feed the same file."""
    spec = importlib.util.spec_from_file_location("crafted", REPO / "tests/ingest/conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crafted"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    data: bytes = module.shared_stream_pdf()
    return data


def identity(base: str, address: str, name: str) -> httpx.Client:
    """A fresh identity (its cookie) calling from ``address``."""
    client = httpx.Client(base_url=base, headers={"X-Forwarded-For": address}, timeout=600)
    client.post("/users", json={"display_name": name}).raise_for_status()
    return client


def upload(client: httpx.Client, kb: str, name: str, data: bytes) -> str:
    r = client.post(f"/kb/{kb}/documents", files=[("files", (name, data))])
    r.raise_for_status()
    return str(r.json()["job_id"])


def wait(client: httpx.Client, job_id: str, timeout: float = 600) -> dict[str, object]:
    end = time.monotonic() + timeout
    while True:
        r = client.get(f"/jobs/{job_id}")
        r.raise_for_status()
        state = dict(r.json())
        if state["status"] in ("done", "failed") or time.monotonic() > end:
            return state
        time.sleep(0.1)


def small(base: str, round_: int) -> tuple[float, str]:
    carol = identity(base, CAROL, f"carol-{round_}")
    start = time.perf_counter()
    state = wait(carol, upload(carol, "notes", f"quokka-{round_}.md", SMALL))
    return time.perf_counter() - start, str(state["status"])


def attacked(base: str, round_: int, addresses: list[str], pdf: bytes) -> tuple[float, str, str]:
    attackers = [identity(base, a, f"mallory-{round_}-{i}") for i, a in enumerate(addresses)]
    start = time.perf_counter()
    jobs = [upload(m, "attack", f"shared-{round_}-{i}.pdf", pdf) for i, m in enumerate(attackers)]
    time.sleep(0.5)  # both crafted jobs queued or running before Carol's
    took, status = small(base, round_)
    ends = []
    for m, job_id in zip(attackers, jobs, strict=True):
        state = wait(m, job_id)
        errors = (state.get("result") or {}).get("errors") or [{}]  # type: ignore[union-attr]
        reason = errors[0].get("reason", state["message"])
        ends.append((time.perf_counter() - start, str(state["status"]), str(reason)))
    crafted = "; ".join(f"{s} after {t:.1f} s" for t, s, _ in ends)
    return took, status, f"{crafted} — {ends[0][2]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=str(REPO / "src"))
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenarios", default="1,2,3", help="which of 1 (alone), 2, 3 to run")
    args = ap.parse_args()
    wanted = {int(s) for s in args.scenarios.split(",")}
    pdf = crafted_pdf()
    print(f"crafted PDF: {len(pdf):,} bytes; src {args.src}", file=sys.stderr)
    env = {"RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES": "false"}
    proc, data = start_offline_server(
        Path(args.src).resolve(), args.port, env, prefix="ragchat-bench-attack-"
    )
    base = f"http://127.0.0.1:{args.port}"
    rows: list[tuple[str, float, str, str]] = []
    try:
        small(base, 0)  # warm-up: the first job's child loads the model cold
        for r in range(1, args.runs + 1):
            load = os.getloadavg()[0]
            if 1 in wanted:
                took, status = small(base, r * 10)
                rows.append(("alone", took, status, f"load {load:.1f}"))
                print(rows[-1], file=sys.stderr)
            if 2 in wanted:
                took, status, note = attacked(base, r * 10 + 1, ["203.0.113.5"] * 2, pdf)
                rows.append(("beside 2 crafted, 1 attacker address", took, status, note))
                print(rows[-1], file=sys.stderr)
            if 3 in wanted:
                addresses = ["203.0.113.5", "203.0.113.6"]
                took, status, note = attacked(base, r * 10 + 2, addresses, pdf)
                rows.append(("beside 2 crafted, 2 attacker addresses", took, status, note))
                print(rows[-1], file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(60)
    print("| scenario | small upload, POST → done | status | crafted uploads |")
    print("|---|---|---|---|")
    for label, took, status, note in rows:
        print(f"| {label} | {took:.2f} s | {status} | {note} |")
    print()
    for label in dict.fromkeys(r[0] for r in rows):
        times = [r[1] for r in rows if r[0] == label]
        print(f"- {label}: median {statistics.median(times):.2f} s over {len(times)} run(s)")
    print(f"\ndata directory: {data}")


if __name__ == "__main__":
    main()
