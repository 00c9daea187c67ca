"""``build_engine``: settings + agent config (+ whatever the caller brings) → a ready
``ChatEngine``. Everything the engine uses is decided here, once: nothing is set on the engine
afterwards. Knowledge bases are opened on first use by an agent, so the engine starts fast and
a missing KB only affects its agents."""

from __future__ import annotations

import time
from typing import Literal

from ragchat.agents.config import AppConfig
from ragchat.agents.engine import ChatEngine
from ragchat.agents.retrievers import KBOpener, RetrieverCache
from ragchat.agents.turn_vectors import turn_vectors
from ragchat.agents.wiring import AgentWiring, Clock
from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatModel
from ragchat.safety.base import SafetyClassifier
from ragchat.safety.guard import SafetyGuard, as_guard
from ragchat.settings import Settings
from ragchat.store.memory import InMemoryMemoryStore, MemoryStore
from ragchat.tenancy.documents import DocumentVisibility

OFFLINE: Literal["offline"] = "offline"


def build_engine(
    settings: Settings,
    app_config: AppConfig,
    *,
    embedder: Embedder | None = None,
    chat_model: ChatModel | None = None,
    safety: SafetyClassifier | SafetyGuard | Literal["offline"] | None = OFFLINE,
    memory: MemoryStore | None = None,
    kb_opener: KBOpener | None = None,
    visibility: DocumentVisibility | None = None,
    clock: Clock = time.perf_counter,
) -> ChatEngine:
    """``chat_model=None`` runs every step's heuristic. ``safety``: by default
    ``ragchat.safety.build_safety`` (the offline classifier, and with a moderation model
    configured Llama Guard as well, the stricter verdict winning), a ``SafetyClassifier``
    (standard refusals are added) or a ``SafetyGuard`` with its own, or None (messages are not
    classified). ``memory=None`` keeps long-term memory in process memory. ``kb_opener`` opens
    a knowledge base by name (default: from ``settings.kb_root``);
    ``visibility`` (tenancy's ``DocumentAccess``) says which documents each user may see in the
    state being searched and names shared uploads as each user's own copy (default: everyone
    sees everything, as recorded)."""
    from ragchat import resources

    app_config = app_config.with_no_answer_messages(settings.compat.no_answer_messages)
    # Every user of the embedder (safety, routing, retrieval, composition, memory) shares one
    # fast path: one query vector per turn, cached sentence vectors, micro-batched calls.
    embedder = (
        resources.embedder(settings) if embedder is None else resources.fast(embedder, settings)
    )
    if safety == OFFLINE:
        from ragchat.safety.factory import build_safety

        # The turn's message vector is lent to the classifier (``turn_vectors``).
        safety = build_safety(settings, turn_vectors(embedder), chat_model)
    assert not isinstance(safety, str)
    knowledge = RetrieverCache(
        settings,
        embedder,
        chat_model,
        opener=kb_opener,
        visibility=visibility,
    )
    wiring = AgentWiring(
        settings=settings,
        app_config=app_config,
        embedder=embedder,
        knowledge=knowledge,
        memory=memory or InMemoryMemoryStore.from_settings(embedder, settings.memory),
        chat_model=chat_model,
        safety=as_guard(safety),
        clock=clock,
    )
    return ChatEngine(wiring)
