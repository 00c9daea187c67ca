"""HTTP failures of OpenAI-compatible providers: which ones are worth retrying, how long the
provider asks us to wait (``Retry-After``), and the ``LLMError``s raised for the rest.

Kept apart from ``ragchat.llm.openai_compat`` so the client class reads as request → retry →
parse, with the provider quirks of error bodies and headers collected here.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any, NoReturn

import httpx

from ragchat.errors import LLMError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# Connection-level failures worth another attempt; read/write timeouts are not retried
# (a model that was too slow once will be too slow again, and the user is waiting).
RETRY_TRANSPORT: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)


class HTTPStatusLLMError(LLMError):
    """A non-retryable HTTP error from the provider; ``status`` lets callers branch on it."""

    def __init__(self, status: int, message: str, body: Any = None) -> None:
        super().__init__(f"LLM provider returned HTTP {status}: {message}")
        self.status = status
        self.body = body


class ToolUseFailed(HTTPStatusLLMError):
    """Groq-style 400 ``tool_use_failed``: the model's attempt is in ``failed_generation``."""

    def __init__(self, status: int, message: str, body: Any, failed_generation: str) -> None:
        super().__init__(status, message, body)
        self.failed_generation = failed_generation


def raise_http_error(status: int, message: str, body: Any) -> NoReturn:
    """``ToolUseFailed`` when the body carries the model's failed tool call, else
    ``HTTPStatusLLMError``."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict) and (
        err.get("code") == "tool_use_failed" or "failed_generation" in err
    ):
        raise ToolUseFailed(status, message, body, str(err.get("failed_generation") or ""))
    raise HTTPStatusLLMError(status, message, body)


def provider_message(body: Any, text: str) -> str:
    """The human-readable error message in a provider's (JSON or plain-text) error body."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(err.get(key), str):
                    return str(err[key])
        elif isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return text.strip()[:500] or "<empty body>"


def json_or_none(response: httpx.Response) -> Any:
    """The decoded JSON body, or ``None`` when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Seconds from ``Retry-After`` (delta-seconds or HTTP date) or ``retry-after-ms``."""
    ms = response.headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
