"""How a stop reaches work in progress: the running upload and the start-up's ingestion stop
at their next safe point instead of after uvicorn's drain."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from fastapi import FastAPI

from ragchat.api.state import AppState
from ragchat.errors import IngestCancelled
from ragchat.ingestion.ingest import Progress


def stop_when(stopping: threading.Event) -> Progress:
    """An ingestion progress callback that stops the ingestion (nothing of it saved) once
    ``stopping`` is set: a signal during start-up does not wait for the bootstrap ingestion."""

    def check(stage: str, done: int, total: int) -> None:
        if stopping.is_set():
            raise IngestCancelled("the server is stopping")

    return check


def cancel_ingestion(app: FastAPI) -> None:
    """Called as soon as a stop is asked for (``ragchat serve`` on SIGTERM/SIGINT), before
    uvicorn drains the open connections: the running upload stops at its next safe point,
    and so does the start-up's ingestion of the configured knowledge bases."""
    stopping = getattr(app.state, "stopping", None)
    if isinstance(stopping, threading.Event):
        stopping.set()
    state = getattr(app.state, "ragchat", None)
    if isinstance(state, AppState):
        state.documents.cancel()


def cancel_on_signal(app: FastAPI) -> None:
    """In a worker of ``serve --workers N``: SIGTERM/SIGINT also reach ``cancel_ingestion``
    at once (uvicorn's own handler, wrapped, still drains the connections), so a running
    upload stops at its next safe point instead of after the drain. Called from the lifespan,
    on the main thread, after uvicorn installed its handlers (it restores its originals)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(
            signum: int, frame: FrameType | None, previous: Callable[..., Any] = previous
        ) -> None:
            cancel_ingestion(app)
            previous(signum, frame)

        signal.signal(sig, handler)
