"""Pure ASGI middleware (no BaseHTTPMiddleware: it would buffer or break streaming and client
disconnects): request context and logging, security headers, the identity cookie, the
catch-all 500, request body limits, and HEAD answered as GET."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragchat.api.context import RequestContext, request_id_from, reset_current, set_current
from ragchat.api.errors import error_body

log = logging.getLogger("ragchat.api.access")

CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
# /docs and /redoc (``ragchat.api.docs``) load Swagger UI / ReDoc from this server only: Swagger
# UI starts from an inline script, both set inline styles, ReDoc's search runs in a blob: worker.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; object-src 'none'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
DOCS_PATHS = ("/docs", "/redoc")
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class RequestContextMiddleware:
    """Request id (X-Request-ID echoed or generated), start/end log lines with user, agent,
    latency and time to first byte, security headers (CSP on HTML), the Set-Cookie a new
    anonymous identity asked for, and a generic 500 for anything unhandled. ``worker``: also
    say which server process answered (``X-Ragchat-Worker``, its pid), for ``serve --workers``
    where several share the port."""

    def __init__(self, app: ASGIApp, *, worker: bool = False) -> None:
        self.app = app
        self.worker = str(os.getpid()) if worker else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        client = scope.get("client")
        ctx = RequestContext(
            request_id=request_id_from(headers.get("x-request-id")),
            method=scope["method"],
            path=scope["path"],
            client=client[0] if client else "",
        )
        scope["ragchat.ctx"] = ctx
        token = set_current(ctx)
        started = False
        status = 500
        log.info(
            "request start %s %s",
            ctx.method,
            ctx.path,
            extra={"request_id": ctx.request_id, "client": ctx.client},
        )

        async def send_wrapper(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                ctx.ttfb_ms = ctx.elapsed_ms()
                out = MutableHeaders(scope=message)
                out["X-Request-ID"] = ctx.request_id
                if self.worker is not None:
                    out["X-Ragchat-Worker"] = self.worker
                for name, value in SECURITY_HEADERS.items():
                    out.setdefault(name, value)
                if out.get("content-type", "").startswith("text/html"):
                    csp = DOCS_CSP if ctx.path in DOCS_PATHS else CSP
                    out.setdefault("Content-Security-Policy", csp)
                    out.setdefault("X-Frame-Options", "DENY")
                if ctx.set_cookie:
                    out.append("Set-Cookie", ctx.set_cookie)
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception:
            log.exception("unhandled error on %s %s", ctx.method, ctx.path)
            if not started:
                body = error_body("internal_error", "Internal server error.")
                await _send_json(send_wrapper, 500, body)
        finally:
            log.info(
                "request end %s %s %s",
                ctx.method,
                ctx.path,
                status,
                extra={
                    "request_id": ctx.request_id,
                    "status": status,
                    "latency_ms": ctx.elapsed_ms(),
                    "ttfb_ms": ctx.ttfb_ms,
                    "ttft_ms": ctx.ttft_ms,
                    "user_id": ctx.user_id,
                    "agent": ctx.agent,
                },
            )
            reset_current(token)


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a streamed body passes the limit; FastAPI re-raises
    HTTPExceptions from body parsing, so the handler answers 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"Request body too large (limit {limit} bytes).")


class BodyLimitMiddleware:
    """413 when Content-Length or the bytes actually received exceed the route's limit:
    ``limit_for(path)`` (uploads get a larger one than JSON requests)."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            body = error_body("payload_too_large", f"Request body too large (limit {limit} bytes).")
            await _send_json(send, 413, body)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, limited, send)


async def _send_json(send: Send, status: int, body: dict[str, object]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class HeadAsGetMiddleware:
    """HEAD on any GET route answers GET's status and headers without the body.

    Uptime monitors and link checkers probe with HEAD; FastAPI routes declared with ``get``
    would answer it 405. Innermost, so the outer middleware still sees (and logs) HEAD."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
