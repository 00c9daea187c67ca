"""The turn's message vector (``Turn.embedding``) lent to the stages that embed through an
``Embedder`` they were built with (the embedding router, the offline safety classifier): while
a stage judges a turn (``lending(turn)``), its ``TurnVectors`` embedder answers the turn's
message with the turn's one vector and embeds any other text. So safety, routing and retrieval
share one computation without a change to the classifiers' interfaces.

The lent turn is a context variable: concurrent turns (tasks, worker threads started with
``asyncio.to_thread``) never see each other's."""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ragchat.agents.types import Turn
from ragchat.embed.base import Embedder, Matrix, Vector

_LENT: ContextVar[Turn | None] = ContextVar("ragchat_lent_turn", default=None)


@contextmanager
def lending(turn: Turn | None) -> Iterator[None]:
    """``TurnVectors`` embedders reuse ``turn``'s message vector inside this block."""
    token = _LENT.set(turn)
    try:
        yield
    finally:
        _LENT.reset(token)


class TurnVectors:
    """An ``Embedder`` over ``inner``: the lent turn's message is ``Turn.embedding(inner)``.
    ``embed_documents`` reuses it only for a ``symmetric`` inner embedder (where a document
    vector and a query vector of one text are the same)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dim = inner.dim
        self.symmetric = bool(getattr(inner, "symmetric", False))

    def embed_query(self, text: str) -> Vector:
        turn = _LENT.get()
        if turn is not None and text == turn.message:
            return turn.embedding(self.inner)
        return self.inner.embed_query(text)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        turn = _LENT.get()
        if turn is None or not self.symmetric or turn.message not in texts:
            return self.inner.embed_documents(texts, progress=progress)
        others = [t for t in texts if t != turn.message]
        rows = iter(self.inner.embed_documents(others, progress=progress) if others else ())
        mine = turn.embedding(self.inner)
        return np.stack([mine if t == turn.message else next(rows) for t in texts]).astype(
            np.float32
        )


_VIEWS: weakref.WeakKeyDictionary[Embedder, TurnVectors] = weakref.WeakKeyDictionary()


def turn_vectors(inner: Embedder) -> TurnVectors:
    """One view per embedder, so what is memoised per embedder (the safety classifier's
    embedded exemplars) is shared by every engine built on it."""
    if isinstance(inner, TurnVectors):
        return inner
    try:
        view = _VIEWS.get(inner)
        if view is None:
            view = _VIEWS[inner] = TurnVectors(inner)
        return view
    except TypeError:  # an embedder that cannot be weakly referenced
        return TurnVectors(inner)
