"""Settings → the safety classifier every user message goes through before any agent runs."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatModel
from ragchat.safety.base import DEFAULT_BLOCKED, SafetyClassifier, SafetyVerdict
from ragchat.safety.combine import StrictestOf
from ragchat.safety.llama_guard import LlamaGuardClassifier
from ragchat.safety.offline import OfflineSafetyClassifier

log = logging.getLogger(__name__)


class LoggedClassifier:
    """Logs unsafe verdicts at WARNING with the category and code only, never the text."""

    def __init__(self, inner: SafetyClassifier) -> None:
        self.inner = inner

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        verdict = await self.inner.classify(text, history)
        if not verdict.safe:
            log.warning(
                "safety: message refused (category=%s, code=%s)",
                verdict.category or "unknown",
                verdict.code or "-",
            )
        return verdict


def _moderation_chat_model(settings: Any, chat_model: ChatModel, name: str) -> ChatModel | None:
    """The chat model that serves ``name``: ``chat_model`` itself when it already is that model
    (or is a custom/test model), a sibling on the same OpenAI-compatible endpoint otherwise.
    A local GGUF backend serves one model only, so it cannot moderate: ``None``."""
    if getattr(chat_model, "name", None) == name:
        return chat_model
    llm = getattr(settings, "llm", None)
    backend = getattr(llm, "backend", None)
    if backend == "openai" and llm is not None:
        from ragchat.llm.factory import build_chat_model

        sibling = settings.model_copy(update={"llm": llm.model_copy(update={"model": name})})
        return build_chat_model(sibling)
    if backend == "local":
        log.warning(
            "safety: llm.moderation_model %r needs an OpenAI-compatible endpoint; the local "
            "backend serves one model, so the offline classifier is used",
            name,
        )
        return None
    return chat_model


def build_safety(
    settings: Any,
    embedder: Embedder,
    chat_model: ChatModel | None,
    *,
    blocked: Iterable[str] = DEFAULT_BLOCKED,
    offline: OfflineSafetyClassifier | None = None,
) -> SafetyClassifier:
    """Llama Guard (``settings.llm.moderation_model``) AND the offline classifier when a chat
    model exists, the strictest verdict winning (``StrictestOf``); the offline classifier
    alone otherwise. The offline classifier is also Llama Guard's fallback when the model
    fails. ``offline`` reuses an already built classifier (its exemplars are embedded once)."""
    blocked = frozenset(blocked)
    offline = (
        offline.with_blocked(blocked)
        if offline is not None
        else OfflineSafetyClassifier(embedder, blocked=blocked)
    )
    moderation = getattr(getattr(settings, "llm", None), "moderation_model", None)
    guard_model = (
        _moderation_chat_model(settings, chat_model, moderation)
        if moderation and chat_model is not None
        else None
    )
    if guard_model is None:
        log.info("safety: offline classifier (rules + exemplars + overdose intent)")
        return LoggedClassifier(offline)
    log.info("safety: Llama Guard via %r and the offline classifier, strictest wins", moderation)
    guard = LlamaGuardClassifier(guard_model, blocked=blocked, fallback=offline)
    return LoggedClassifier(StrictestOf([guard, offline]))
