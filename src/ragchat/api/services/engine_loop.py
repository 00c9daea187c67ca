"""The engine on its own event loop, in its own thread.

The offline agents do CPU work (embedding, retrieval, extractive composition) inside their
async nodes, which would stall the server's event loop for a second or more per turn: no
health checks, no uploads, no disconnect detection meanwhile. ``ThreadedEngine`` runs every
engine coroutine on a dedicated loop and awaits the result from the server's loop;
cancelling the awaiting request (a client disconnect) cancels the engine task too."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

import anyio

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.events import TurnEvent
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import TurnResult
from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatModel

log = logging.getLogger(__name__)
T = TypeVar("T")


class Engine(Protocol):
    """The part of ``ChatEngine`` the API uses (tests stand in a scripted one)."""

    @property
    def agents(self) -> dict[str, AgentConfig]: ...

    @property
    def app_config(self) -> AppConfig: ...

    @property
    def chat_model(self) -> ChatModel | None: ...

    @property
    def embedder(self) -> Embedder: ...

    def validate(self, request: TurnRequest) -> TurnRequest: ...

    async def run_turn(self, request: TurnRequest) -> TurnResult: ...

    def stream_turn(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]: ...

    async def title(self, first_user: str, first_reply: str = "") -> str: ...

    async def coverage(
        self, question: str, probes: Sequence[tuple[str, str]], user_id: str
    ) -> list[float]: ...

    async def aclose(self) -> None: ...


class ThreadedEngine:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="ragchat-engine", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def agents(self) -> dict[str, AgentConfig]:
        return self.engine.agents

    @property
    def app_config(self) -> AppConfig:
        return self.engine.app_config

    @property
    def chat_model(self) -> ChatModel | None:
        return self.engine.chat_model

    @property
    def embedder(self) -> Embedder:
        return self.engine.embedder

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``'s result, computed on the engine loop; cancellation is passed on."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return await asyncio.wrap_future(future)

    def validate(self, request: TurnRequest) -> TurnRequest:
        """Cheap and pure: runs on the caller's thread."""
        return self.engine.validate(request)

    async def run_turn(self, request: TurnRequest) -> TurnResult:
        return await self.call(self.engine.run_turn(request))

    async def title(self, first_user: str, first_reply: str = "") -> str:
        return await self.call(self.engine.title(first_user, first_reply))

    async def coverage(
        self, question: str, probes: Sequence[tuple[str, str]], user_id: str
    ) -> list[float]:
        return await self.call(self.engine.coverage(question, probes, user_id))

    async def stream_turn(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        """The engine's events, each fetched on the engine loop. Closing this generator closes
        the engine's (which cancels the graph and any model request)."""
        events = self.engine.stream_turn(request)

        running: dict[str, asyncio.Task[Any]] = {}  # touched on the engine loop only

        async def step() -> tuple[bool, TurnEvent | None]:
            task = asyncio.current_task()
            assert task is not None
            running["step"] = task
            try:
                return True, await events.__anext__()
            except StopAsyncIteration:
                return False, None
            finally:
                running.pop("step", None)

        async def close() -> None:
            # A cancelled step may still be unwinding (its cancellation crosses threads):
            # closing a generator that is still running is an error, so wait for it first.
            task = running.get("step")
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task})
            await events.aclose()

        try:
            while True:
                more, event = await self.call(step())
                if not more:
                    return
                assert event is not None
                yield event
        finally:
            with anyio.CancelScope(shield=True):
                await self.call(close())

    async def aclose(self) -> None:
        """Closes the chat model's connections (on the loop that opened them), then the loop."""
        try:
            await self.call(self.engine.aclose())
        except Exception:
            log.warning("closing the chat model failed", exc_info=True)
        self.loop.call_soon_threadsafe(self.loop.stop)
        await anyio.to_thread.run_sync(self._thread.join, 5.0)
        if not self.loop.is_running():
            self.loop.close()
