"""Per-node timings: node methods decorated with ``@timed("name")`` report their wall time in
milliseconds in the ``timings`` state field (summed when a node runs more than once).

The decorated method, read from a node object, is a ``TimedNode``: a callable object with an
``async __call__(state)``, which is what LangGraph's ``add_node`` expects (also to a type
checker, unlike a plain wrapper function)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar, overload

Update = dict[str, Any]


class HasClock(Protocol):
    @property
    def clock(self) -> Callable[[], float]: ...


N = TypeVar("N", bound=HasClock)
S = TypeVar("S")


class TimedNode(Generic[S]):
    def __init__(
        self, name: str, fn: Callable[[S], Awaitable[Update]], clock: Callable[[], float]
    ) -> None:
        self.name = name
        self.fn = fn
        self.clock = clock
        self.__name__ = name

    async def __call__(self, state: S) -> Update:
        start = self.clock()
        update = dict(await self.fn(state))
        ms = (self.clock() - start) * 1000.0
        update["timings"] = {**update.get("timings", {}), self.name: round(ms, 3)}
        return update


class TimedMethod(Generic[N, S]):
    def __init__(self, name: str, method: Callable[[N, S], Awaitable[Update]]) -> None:
        self.name = name
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> TimedMethod[N, S]: ...

    @overload
    def __get__(self, obj: N, owner: type | None = None) -> TimedNode[S]: ...

    def __get__(self, obj: N | None, owner: type | None = None) -> TimedMethod[N, S] | TimedNode[S]:
        if obj is None:
            return self
        return TimedNode(self.name, functools.partial(self.method, obj), obj.clock)


def timed(name: str) -> Callable[[Callable[[N, S], Awaitable[Update]]], TimedMethod[N, S]]:
    def decorate(method: Callable[[N, S], Awaitable[Update]]) -> TimedMethod[N, S]:
        return TimedMethod(name, method)

    return decorate
