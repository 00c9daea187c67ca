"""Awaiting a chat model from synchronous code (query expansion inside the retriever).

The retriever is synchronous, and it is called both from plain threads (CLI, evaluation, the
server's worker threads) and from inside async graph nodes, whose thread is running an event
loop. ``asyncio.run`` fails in the latter ("cannot be called from a running event loop"), and
scheduling onto that loop and waiting for the result would deadlock: the wait blocks the very
loop that would have to run the coroutine. So coroutines run on one background loop in a
daemon thread of its own, and the caller blocks on the result; that works in both cases.

One long-lived loop rather than ``asyncio.run`` in a fresh thread per call: what a model binds
to the loop it runs on (an httpx connection pool, see ``OpenAICompatChatModel``) stays usable
from one call to the next instead of dying with a throwaway loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from ragchat.errors import LLMError

T = TypeVar("T")


class _BackgroundLoop:
    """An event loop running forever in a daemon thread, started on first use (and again in
    a forked child, which inherits the loop object but not its thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            alive = self._thread is not None and self._thread.is_alive()
            if self._loop is None or self._pid != os.getpid() or not alive:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="ragchat-llm-sync", daemon=True
                )
                thread.start()
                self._loop, self._thread, self._pid = loop, thread, os.getpid()
            assert self._loop is not None
            return self._loop


_background = _BackgroundLoop()


def run_blocking(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """``coro``'s result, awaited on the background loop, whether or not the calling thread
    runs an event loop. Raises what the coroutine raises, or ``TimeoutError`` after
    ``timeout`` seconds (the coroutine is then cancelled)."""
    loop = _background.get()
    if threading.current_thread() is _background.thread:
        coro.close()
        raise LLMError("run_blocking was called on its own loop: it would wait for itself")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result(timeout)
    finally:
        future.cancel()  # a no-op once done; stops the coroutine after a timeout or Ctrl-C
