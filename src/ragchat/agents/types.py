"""The turn contract: what a caller hands the engine (``ConversationState``, ``TurnOptions``),
what every graph node reads (``Turn``), what an agent gives back (``AgentOutcome``) and what the
engine returns (``TurnResult`` with its typed ``TurnMetadata``; ``events.py`` for streams).

Everything here is typed end to end: nothing is turned into a dict before the API (or the CLI)
serialises it, and nothing is read back by string keys."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ragchat.agents.metadata import AgentTrace, GateInfo, RetrievalInfo, TurnMetadata, UserProfile
from ragchat.embed.base import Embedder, Vector
from ragchat.errors import ConfigError, InvalidInput
from ragchat.types import Citation, HistoryMessage


class UnknownAgent(ConfigError):
    """A turn asked for an agent name the configuration does not declare."""


class InvalidMessage(InvalidInput):
    """The user message is empty (or only whitespace)."""


@dataclass
class ConversationState:
    """What the caller loads before a turn. The caller's store is the single source of truth:
    the engine keeps nothing between turns; ``TurnResult.metadata`` carries the (possibly new)
    assigned agent and user profile for the caller to persist."""

    conversation_id: str
    assigned_agent: str | None = None
    history: list[HistoryMessage] = field(default_factory=list)  # recent messages, oldest first
    user_profile: UserProfile = field(default_factory=UserProfile)
    # Self-harm intent was seen earlier in this conversation (the store's crisis flag); the
    # result's ``metadata.conversation_crisis`` is the flag for the caller to persist.
    crisis: bool = False


@dataclass(frozen=True)
class TurnOptions:
    """Per-turn overrides: ``agent`` forces an agent (the OpenAI-compatible model field),
    ``chapter`` / ``selected_text`` select textbook modes, ``kb`` searches another knowledge
    base with the agent's settings, ``top_k`` caps the passages retrieved.

    ``kbs``: the knowledge bases the conversation is bound to (a user's own). The turn is then
    answered by one of the agents that can answer over any knowledge base
    (``AgentConfig.any_knowledge_base``): ``kb_agent`` (the knowledge base's own choice) when
    given, else the router's, searching all of ``kbs``."""

    agent: str | None = None
    chapter: str | None = None
    selected_text: str | None = None
    top_k: int | None = None
    kb: str | None = None
    kbs: tuple[str, ...] = ()
    kb_agent: str | None = None

    @property
    def searched(self) -> tuple[str, ...]:
        """The knowledge bases this turn searches instead of the agent's own (() for its own)."""
        return self.kbs or ((self.kb,) if self.kb else ())


class QueryVectors:
    """A turn's query vectors by (embedding model, text), each computed once: the message's
    serves safety, routing and retrieval. Shared by the turns ``replace`` makes from one turn
    (the agent's, with a switch phrase removed), so it is keyed by the text, never stale."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], Vector] = {}
        self._lock = threading.Lock()  # retrieval runs in worker threads

    def of(self, embedder: Embedder, text: str) -> Vector:
        key = (embedder.model_name, text)
        with self._lock:
            vector = self._vectors.get(key)
            if vector is None:  # read-only: every consumer gets this one array
                vector = np.array(embedder.embed_query(text), dtype=np.float32)
                vector.flags.writeable = False
                self._vectors[key] = vector
            return vector


@dataclass(frozen=True)
class Turn:
    """One turn as every graph node sees it: the message and what the caller loaded, immutable.
    The supervisor hands an agent the same turn, with the message a switch phrase left over.

    Per-turn work worth sharing between steps lives here, next to the message it is derived
    from: the message's query vector (``embedding``), computed by its first consumer."""

    message: str
    user_id: str = ""
    conversation_id: str = ""
    history: tuple[HistoryMessage, ...] = ()
    user_profile: UserProfile = field(default_factory=UserProfile)
    options: TurnOptions = field(default_factory=TurnOptions)
    assigned_agent: str | None = None  # the conversation's agent before this turn
    crisis_flagged: bool = False  # ConversationState.crisis
    vectors: QueryVectors = field(default_factory=QueryVectors, compare=False, repr=False)

    def embedding(self, embedder: Embedder) -> Vector:
        """The message's query vector (``embedder.embed_query``), computed once per turn."""
        return self.vectors.of(embedder, self.message)


@dataclass(frozen=True)
class AgentOutcome:
    """What one agent's graph produced for a turn (the supervisor turns it into a result)."""

    reply: str
    citations: tuple[Citation, ...] = ()
    bubbles: tuple[str, ...] | None = None  # companion replies as several chat bubbles
    no_answer: bool = False
    search_query: str | None = None
    retrieval: RetrievalInfo | None = None
    gate: GateInfo | None = None
    user_profile: UserProfile | None = None  # the updated profile, when the turn changed it
    trace: AgentTrace | None = None  # the agent kind's own account of the turn
    timings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TurnResult:
    """A finished turn: the reply, who gave it, its citations, and typed metadata (routing,
    safety, retrieval and gate, what to persist, per-step timings)."""

    reply: str
    agent: str
    metadata: TurnMetadata
    citations: list[Citation] = field(default_factory=list)
    bubbles: list[str] | None = None  # companion replies as several chat bubbles
    no_answer: bool = False
