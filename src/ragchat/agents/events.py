"""The events of a streamed turn, in order: one ``MetadataEvent`` (who answers), ``TokenEvent``
deltas that join to exactly the reply, one ``CitationsEvent``, one ``FinalEvent`` with the
whole ``TurnResult``. Graph nodes write the first two to LangGraph's custom stream; the engine
adds the last two. The API maps each to an SSE event (``api/services/chat.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from ragchat.agents.metadata import Routing
from ragchat.agents.types import TurnResult
from ragchat.types import Citation


@dataclass(frozen=True)
class MetadataEvent:
    agent: str
    routing: Routing


@dataclass(frozen=True)
class TokenEvent:
    """A reply delta. ``paced``: part of a reply that exists whole at once (a heuristic
    answer, a canned message); the engine spaces these out when streaming, since deltas
    written in one go would reach a reader as one burst."""

    text: str
    paced: bool = False


@dataclass(frozen=True)
class CitationsEvent:
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class FinalEvent:
    result: TurnResult


TurnEvent = MetadataEvent | TokenEvent | CitationsEvent | FinalEvent
