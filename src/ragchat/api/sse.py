"""Server-Sent Events: the wire format and a response that notices a client going away.

Starlette's ``StreamingResponse`` only watches for ``http.disconnect`` on servers speaking ASGI
< 2.4 and leaves the body iterator unclosed when it stops early. ``EventStreamResponse`` always
watches, always closes the iterator (shielded, so the iterator's cleanup — stopping the engine,
storing the partial reply — completes even under cancellation) and then releases its stream
slot."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse_event(event: str | None, data: Any) -> bytes:
    """One event; ``data`` is JSON on a single line (json.dumps escapes newlines)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class EventStreamResponse(StreamingResponse):
    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterator[bytes],
        status_code: int = 200,
        *,
        on_close: Callable[[], None] | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        super().__init__(content, status_code, headers=SSE_HEADERS, background=background)
        self._source = content
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        completed = False
        try:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    await self.listen_for_disconnect(receive)
                    group.cancel_scope.cancel()

                group.start_soon(watch)
                try:
                    await self.stream_response(send)
                    completed = True
                except OSError:  # the client went away (ASGI >= 2.4 servers)
                    pass
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                close = getattr(self._source, "aclose", None)
                if close is not None:
                    await close()
            if self._on_close is not None:
                self._on_close()
        if completed and self.background is not None:
            await self.background()
