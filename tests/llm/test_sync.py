"""``run_blocking``: awaiting a chat model from synchronous code, with or without a running
event loop in the calling thread, including a real HTTP model used from two loops."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragchat.errors import LLMError, LLMUnavailable
from ragchat.llm.base import Message
from ragchat.llm.openai_compat import OpenAICompatChatModel
from ragchat.llm.sync import run_blocking


async def answer(value: int) -> tuple[int, str]:
    await asyncio.sleep(0)
    return value, threading.current_thread().name


def test_runs_without_a_loop_in_the_calling_thread() -> None:
    value, thread = run_blocking(answer(1))
    assert value == 1 and thread == "ragchat-llm-sync"


def test_runs_inside_a_running_loop() -> None:
    async def node() -> tuple[int, str]:
        return run_blocking(answer(2))  # asyncio.run() here would raise RuntimeError

    assert asyncio.run(node()) == (2, "ragchat-llm-sync")


def test_errors_propagate_and_timeouts_cancel() -> None:
    async def fail() -> None:
        raise LLMUnavailable("down")

    with pytest.raises(LLMUnavailable):
        run_blocking(fail())

    cancelled = threading.Event()

    async def hang() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError):
        run_blocking(hang(), timeout=0.1)
    assert cancelled.wait(5.0)


def test_refuses_to_wait_for_itself() -> None:
    async def nested() -> int:
        return run_blocking(answer(3))[0]

    with pytest.raises(LLMError, match="wait for itself"):
        run_blocking(nested(), timeout=5.0)


class _Completions(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: connections are pooled and reused

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": "pong"}}]}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_http_model_works_on_its_loop_and_through_run_blocking(server_url: str) -> None:
    """httpx pools connections per event loop; one shared client fails on the second loop
    ("bound to a different event loop"), so the model keeps a client per loop."""
    model = OpenAICompatChatModel(server_url, None, "m", max_retries=0, timeout=5.0)
    ping = [Message("user", "ping")]

    async def engine_loop() -> list[str]:
        replies = [(await model.generate(ping)).content]
        replies.append(run_blocking(model.generate(ping), timeout=10).content)
        replies.append((await model.generate(ping)).content)
        replies.append(run_blocking(model.generate(ping), timeout=10).content)
        await model.aclose()
        return replies

    assert asyncio.run(engine_loop()) == ["pong"] * 4
    assert not model._clients  # closed and forgotten, the background loop's one included
