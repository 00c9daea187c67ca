"""Per-request context (request id, user, agent, timings) in a context variable, so log lines
anywhere below a request — services, worker threads started with ``anyio.to_thread`` — carry
the request id without passing it around."""

from __future__ import annotations

import re
import time
import uuid
from contextvars import ContextVar
from dataclasses import dataclass, field

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


@dataclass
class RequestContext:
    request_id: str
    method: str = ""
    path: str = ""
    client: str = ""
    started: float = field(default_factory=time.perf_counter)
    user_id: str | None = None
    agent: str | None = None
    # A Set-Cookie header value for the response (a new anonymous identity).
    set_cookie: str | None = None
    ttfb_ms: float | None = None
    ttft_ms: float | None = None  # time to first token of a streamed answer

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000.0, 1)


_current: ContextVar[RequestContext | None] = ContextVar("ragchat_request", default=None)


def request_id_from(header: str | None) -> str:
    """The client's X-Request-ID when it is a sane token, else a new one."""
    if header and _REQUEST_ID.match(header):
        return header
    return uuid.uuid4().hex


def current() -> RequestContext | None:
    return _current.get()


def current_request_id() -> str | None:
    ctx = _current.get()
    return ctx.request_id if ctx else None


def set_current(ctx: RequestContext | None) -> object:
    return _current.set(ctx)


def reset_current(token: object) -> None:
    _current.reset(token)  # type: ignore[arg-type]


def note(*, user_id: str | None = None, agent: str | None = None) -> None:
    """Records who and which agent for the request's end-of-request log line."""
    ctx = _current.get()
    if ctx is None:
        return
    if user_id is not None:
        ctx.user_id = user_id
    if agent is not None:
        ctx.agent = agent
