"""LLM-shaped steps: one small contract, two implementations, one fallback.

A step (route, decide, grade, rewrite, reformulate, classify, compose, reply, title, ...) is a
``Step[Request, Result]``: one async ``run``. Each has a model implementation and a heuristic
one (``ragchat.agents.heuristics`` does the work). ``choose`` picks once, when the graph is
built: the heuristic alone without a chat model, else the model wrapped in ``Fallback``, so a
failing model (``LLMError``: unreachable, malformed output) degrades a step, never the turn.
Nodes call ``step.run`` and never ask whether there is a model."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from ragchat.agents.shared.streaming import tokens_written
from ragchat.errors import LLMError
from ragchat.llm.base import ChatModel

log = logging.getLogger(__name__)

Req = TypeVar("Req")
Res = TypeVar("Res")
Req_contra = TypeVar("Req_contra", contravariant=True)
Res_co = TypeVar("Res_co", covariant=True)


class Step(Protocol[Req_contra, Res_co]):
    async def run(self, request: Req_contra) -> Res_co: ...


class Fallback(Generic[Req, Res]):
    """``primary`` (the model), or ``backup`` (the heuristic) when it raises ``LLMError``
    before streaming anything; ``note`` may record on the result why it fell back. A model
    that fails after the reader saw part of its reply is not papered over: that error stands."""

    def __init__(
        self,
        label: str,
        primary: Step[Req, Res],
        backup: Step[Req, Res],
        *,
        note: Callable[[Res, LLMError], Res] | None = None,
    ) -> None:
        self.label = label
        self.primary = primary
        self.backup = backup
        self.note = note

    async def run(self, request: Req) -> Res:
        written = tokens_written()
        try:
            return await self.primary.run(request)
        except LLMError as exc:
            if tokens_written() != written:
                raise
            log.warning("%s: the model failed (%s); using the heuristic", self.label, exc)
            result = await self.backup.run(request)
            return self.note(result, exc) if self.note is not None else result


def choose(
    label: str,
    model: ChatModel | None,
    llm: Callable[[ChatModel], Step[Req, Res]],
    heuristic: Step[Req, Res],
    *,
    note: Callable[[Res, LLMError], Res] | None = None,
) -> Step[Req, Res]:
    """The one place a step is chosen: ``heuristic`` without a model, else ``llm(model)``
    falling back to ``heuristic``. ``label`` names the step in warnings ("agent medical:
    grade")."""
    if model is None:
        return heuristic
    return Fallback(label, llm(model), heuristic, note=note)
