"""Load and soak on one server process over 127.0.0.1: many concurrent SSE streams, the stream
cap, a client hanging up, and thousands of turns with the server's RSS sampled.

The server is the real application (routes, middleware, identity cookies, the store, SSE) in a
``uvicorn`` subprocess, with a stand-in engine that streams a fixed reply at a model's pace
(``--tokens-per-s``, default 20) instead of running retrieval: this measures the serving layer,
which is what many users at once stress; retrieval cost per turn is measured by
``bench_concurrency.py``.

Usage: ``.venv/bin/python benchmarks/bench_load.py [--streams 200] [--soak 2000]``.
Prints a Markdown table on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _common import rss_mib

REPLY_WORDS = 40


def _client(base: str, timeout: float) -> httpx.AsyncClient:
    """A client of its own per user (its own cookie). Plain HTTP on loopback: ``verify=False``
    spares building a TLS context per client, 15-45 ms of this process's CPU each, which the
    first measurements (200 clients built one after another on the event loop that reads every
    stream) counted as seconds of first-token latency."""
    return httpx.AsyncClient(base_url=base, timeout=timeout, verify=False)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- the server side ------------------------------------------------------------------------------
def serve(port: int, data_dir: Path, tokens_per_s: float, max_streams: int) -> None:
    import uvicorn

    from ragchat.agents.config import AgentConfig, AppConfig
    from ragchat.agents.events import FinalEvent, MetadataEvent, TokenEvent, TurnEvent
    from ragchat.agents.metadata import Routing, TurnMetadata
    from ragchat.agents.request import TurnRequest, validate
    from ragchat.agents.types import TurnResult
    from ragchat.api import create_app
    from ragchat.embed.fake import HashingEmbedder
    from ragchat.settings import ApiSettings, Settings

    @dataclass
    class PacedEngine:
        """Streams ``REPLY_WORDS`` words at ``tokens_per_s``, like a hosted model would."""

        app_config: AppConfig = field(
            default_factory=lambda: AppConfig(
                agents={"paced": AgentConfig(kind="support", description="A paced reply.")}
            )
        )
        embedder: Any = field(default_factory=HashingEmbedder)
        chat_model: Any = None

        @property
        def agents(self) -> dict[str, AgentConfig]:
            return dict(self.app_config.agents)

        async def aclose(self) -> None:
            pass

        def _result(self, message: str) -> TurnResult:
            routing = Routing("paced", "load test", 1.0, reassigned=False, router="forced")
            reply = " ".join(["word"] * REPLY_WORDS)
            metadata = TurnMetadata(routing=routing, assigned_agent="paced")
            return TurnResult(reply=reply, agent="paced", metadata=metadata, citations=[])

        def validate(self, request: TurnRequest) -> TurnRequest:
            return validate(request, self.agents)

        async def run_turn(self, request: TurnRequest) -> TurnResult:
            return self._result(request.message)

        async def stream_turn(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
            result = self._result(request.message)
            yield MetadataEvent(result.agent, result.metadata.routing)
            for i, word in enumerate(result.reply.split(" ")):
                await asyncio.sleep(1.0 / tokens_per_s)
                yield TokenEvent(word if i == 0 else " " + word)
            yield FinalEvent(result)

        async def title(self, first_user: str, first_reply: str = "") -> str:
            return "Load test"

    settings = Settings(
        data_dir=data_dir,
        api=ApiSettings(
            rate_limit_per_minute=0,
            max_concurrent_streams=max_streams,
            session_cleanup_interval_s=3600,
        ),
    )
    app = create_app(settings, engine=PacedEngine(), bootstrap=False)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# -- the client side -----------------------------------------------------------------------------
async def _stream(base: str, opened: asyncio.Event | None = None) -> tuple[float, str | None]:
    """(seconds to the first token, error or None) for one new anonymous user."""
    start = time.perf_counter()
    try:
        async with (
            _client(base, 120) as client,
            client.stream("POST", "/chat/stream", json={"message": "hello there"}) as r,
        ):
            if r.status_code != 200:
                return float("nan"), f"HTTP {r.status_code}"
            first = float("nan")
            async for line in r.aiter_lines():
                if line.startswith("event: token") and first != first:
                    first = time.perf_counter() - start
                    if opened is not None:
                        opened.set()
                if line.startswith("event: error"):
                    return first, "error event"
            return first, None
    except httpx.HTTPError as exc:
        return float("nan"), type(exc).__name__


async def concurrent_streams(base: str, n: int) -> dict[str, Any]:
    results = await asyncio.gather(*(_stream(base) for _ in range(n)))
    firsts = [t for t, err in results if err is None]
    errors = [err for _, err in results if err is not None]
    return {"n": n, "first": firsts, "errors": errors}


async def over_the_cap(base: str, cap: int) -> dict[str, Any]:
    """Holds ``cap`` streams open, then asks for one more: status, Retry-After, latency."""
    opened = [asyncio.Event() for _ in range(cap)]
    holders = [asyncio.create_task(_stream(base, o)) for o in opened]
    # Every holder is streaming (its first token arrived; the rest take 2 s more).
    await asyncio.wait_for(asyncio.gather(*(o.wait() for o in opened)), timeout=120)
    start = time.perf_counter()
    async with _client(base, 30) as client:
        r = await client.post("/chat/stream", json={"message": "one more"})
    took = time.perf_counter() - start
    await asyncio.gather(*holders)
    return {"status": r.status_code, "retry_after": r.headers.get("retry-after"), "s": took}


async def hang_up(base: str, rounds: int = 5) -> list[float]:
    """Seconds from a client closing its stream to the stored reply being ``interrupted``."""
    out = []
    for _ in range(rounds):
        async with _client(base, 30) as client:
            async with client.stream("POST", "/chat/stream", json={"message": "hang up"}) as r:
                session = None
                async for line in r.aiter_lines():
                    if line.startswith("data:") and session is None:
                        session = json.loads(line[5:]).get("session_id")
                    if line.startswith("event: token"):
                        break
            closed = time.perf_counter()
            while True:
                msgs = (await client.get(f"/conversations/{session}/messages")).json()
                if msgs and msgs[-1]["status"] == "interrupted":
                    out.append(time.perf_counter() - closed)
                    break
                if time.perf_counter() - closed > 10:
                    out.append(float("inf"))
                    break
                await asyncio.sleep(0.02)
    return out


async def soak(base: str, pid: int, turns: int, workers: int = 8) -> list[tuple[int, float]]:
    """``turns`` JSON chat turns from ``workers`` users, 10 turns per conversation; RSS every
    10% of the way."""
    samples = [(0, rss_mib(pid))]
    done = 0
    step = max(1, turns // 10)

    async def worker(k: int) -> None:
        nonlocal done
        async with _client(base, 60) as client:
            session = None
            while done < turns:
                body: dict[str, Any] = {"message": f"turn {done} from {k}"}
                if session is not None:
                    body["session_id"] = session
                r = await client.post("/chat", json=body)
                r.raise_for_status()
                session = r.json()["session_id"]
                done += 1
                if done % 10 == 0:
                    session = None
                if done % step == 0:
                    samples.append((done, rss_mib(pid)))

    await asyncio.gather(*(worker(k) for k in range(workers)))
    return samples


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    server = sub.add_parser("serve")
    server.add_argument("--port", type=int, required=True)
    server.add_argument("--data", type=Path, required=True)
    for p in (parser, server):
        p.add_argument("--tokens-per-s", type=float, default=20.0)
        p.add_argument("--streams", type=int, default=200)
    parser.add_argument("--soak", type=int, default=2000)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.data, args.tokens_per_s, args.streams)
        return

    port = _free_port()
    data = Path(tempfile.mkdtemp(prefix="ragchat-load-"))
    command = [sys.executable, __file__, "serve", "--port", str(port), "--data", str(data)]
    command += ["--tokens-per-s", str(args.tokens_per_s), "--streams", str(args.streams)]
    proc = subprocess.Popen(command)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline or proc.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        print(f"server up, RSS {rss_mib(proc.pid):.0f} MiB", file=sys.stderr)
        load = asyncio.run(concurrent_streams(base, args.streams))
        print(f"{args.streams} streams done", file=sys.stderr)
        cap = asyncio.run(over_the_cap(base, args.streams))
        hung = asyncio.run(hang_up(base))
        rss = asyncio.run(soak(base, proc.pid, args.soak))
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    first = [t * 1000 for t in load["first"]]
    hung_ms = [t * 1000 for t in hung]
    rows = [
        (
            "concurrent streams",
            f"{load['n']} ({args.tokens_per_s:g} tokens/s, {REPLY_WORDS} words)",
        ),
        ("errors", f"{len(load['errors'])} {sorted(set(load['errors']))}"),
        (
            "first token p50 / p95 / max",
            f"{_pct(first, 0.5):.0f} / {_pct(first, 0.95):.0f} / {max(first, default=0):.0f} ms",
        ),
        (
            "one more over the cap",
            f"HTTP {cap['status']}, Retry-After {cap['retry_after']}, {cap['s'] * 1000:.0f} ms",
        ),
        (
            "hang-up → stored `interrupted` (5 runs)",
            f"max {max(hung_ms):.0f} ms, median {statistics.median(hung_ms):.0f} ms",
        ),
        ("soak: RSS after turns", ", ".join(f"{n}: {mib:.0f} MiB" for n, mib in rss)),
    ]
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
