"""One guard for the server-backed stores (Qdrant, pgvector): the errors that mean the server
is out of reach become ``VectorStoreUnavailable`` (503 in the API); anything else, a bug or a
bad request, passes through unchanged."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from ragchat.errors import VectorStoreUnavailable

Func = Callable[..., Any]


def guard(describe: Callable[[Exception], str | None]) -> Callable[[Func], Func]:
    """A decorator: ``describe`` names an error that means "unavailable" (the message), or
    returns None for one that must pass through."""

    def decorate(func: Func) -> Func:
        @wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except VectorStoreUnavailable:
                raise
            except Exception as exc:
                message = describe(exc)
                if message is None:
                    raise
                raise VectorStoreUnavailable(message) from exc

        return call

    return decorate
