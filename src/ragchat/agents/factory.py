"""Settings + agent config → ``ChatEngine``. Knowledge bases are not opened here but on first
use by an agent, so the engine starts fast and a missing KB only affects its agents."""

from __future__ import annotations

import logging
from typing import Any

from ragchat.agents.config import AppConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.engine import ChatEngine
from ragchat.agents.memory import MemoryStore
from ragchat.index.base import Embedder
from ragchat.llm.base import ChatModel
from ragchat.settings import Settings

log = logging.getLogger(__name__)


def default_safety(
    settings: Settings, embedder: Embedder, chat_model: ChatModel | None = None
) -> Any | None:
    """``ragchat.safety.build_safety``: the offline classifier, and with a moderation model
    configured Llama Guard as well (the stricter verdict wins), so messages are always
    classified unless the caller passes its own guard."""
    try:
        from ragchat.safety.factory import build_safety
    except ImportError:  # pragma: no cover - the safety package is part of ragchat
        log.warning("no safety classifier available: messages are not classified")
        return None
    return build_safety(settings, embedder, chat_model)


def build_engine(
    settings: Settings,
    app_config: AppConfig,
    *,
    chat_model: ChatModel | None = None,
    embedder: Embedder | None = None,
    safety: Any | None = None,
    memory: MemoryStore | None = None,
) -> ChatEngine:
    """``chat_model=None`` runs the offline agents; ``safety`` is a guard with ``classify``
    and ``refusal_for`` or a bare ``SafetyClassifier`` (standard refusals are added), default
    the offline classifier; ``memory=None`` keeps long-term memory in process memory."""
    if embedder is None:
        from ragchat import services

        embedder = services.embedder(settings)
    if safety is None:
        safety = default_safety(settings, embedder, chat_model)
    deps = AgentDeps(
        settings=settings,
        app_config=app_config,
        embedder=embedder,
        chat_model=chat_model,
        memory=memory,
        safety=safety,
    )
    return ChatEngine(deps)
