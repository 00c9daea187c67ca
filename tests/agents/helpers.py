"""Test doubles and small helpers for the agent tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ragchat.agents.engine import ChatEngine
from ragchat.agents.metadata import GateInfo, RetrievalInfo
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.safety.base import SafetyVerdict
from ragchat.safety.responses import refusal_for
from ragchat.types import HistoryMessage
from ragchat.vectorstores.embedded.kb import KnowledgeBase

T = TypeVar("T")
EngineFactory = Callable[..., ChatEngine]  # make_engine(config=None, **build_engine options)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class CachingEmbedder:
    """Memoises the real embedder per text: every engine in the suite re-embeds the same agent
    cards, intent examples and answer sentences, which would otherwise dominate the run time."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dim = inner.dim
        self._docs: dict[str, Vector] = {}
        self._queries: dict[str, Vector] = {}

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        missing = list(dict.fromkeys(t for t in texts if t not in self._docs))
        if missing:
            vectors = self.inner.embed_documents(missing, progress=progress)
            self._docs.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._docs[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]


@dataclass
class FakeSafety:
    """Blocks messages containing a trigger word; records every call."""

    blocked: dict[str, str] = field(default_factory=dict)  # word → category
    calls: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        self.calls.append((text, list(history)))
        for word, category in self.blocked.items():
            if word in text.lower():
                return SafetyVerdict.block(category, reason="test rule")
        return SafetyVerdict.allow("test: nothing detected")

    def refusal_for(self, verdict: SafetyVerdict) -> str:
        return refusal_for(verdict)


@dataclass
class Chat:
    """Drives an engine the way the server does: it keeps the history, the assigned agent and
    the user profile between turns."""

    engine: ChatEngine
    conversation: ConversationState = field(
        default_factory=lambda: ConversationState(conversation_id="c1")
    )
    user_id: str = "u1"

    @staticmethod
    def pair(user: str, assistant: str, agent: str | None = None) -> list[HistoryMessage]:
        return [HistoryMessage("user", user), HistoryMessage("assistant", assistant, agent)]

    async def say(self, message: str, **options: Any) -> TurnResult:
        result = await self.engine.run_turn(
            TurnRequest(
                message,
                user_id=self.user_id,
                conversation=self.conversation,
                options=TurnOptions(**options),
            )
        )
        self.conversation.history += [
            HistoryMessage("user", message),
            HistoryMessage("assistant", result.reply, agent=result.agent),
        ]
        self.conversation.assigned_agent = result.metadata.assigned_agent
        self.conversation.crisis = result.metadata.conversation_crisis
        if result.metadata.user_profile is not None:
            self.conversation.user_profile = result.metadata.user_profile
        return result


def texts(result: TurnResult) -> str:
    """Reply plus the cited passages' previews, lower-cased, for content assertions."""
    return (result.reply + " " + " ".join(c.preview for c in result.citations)).lower()


def gate_of(result: TurnResult) -> GateInfo:
    assert result.metadata.gate is not None, "the turn searched no knowledge base"
    return result.metadata.gate


def retrieval_of(result: TurnResult) -> RetrievalInfo:
    assert result.metadata.retrieval is not None, "the turn has no rag retrieval"
    return result.metadata.retrieval


class BlockingKB:
    """A knowledge base whose dense search blocks its thread until ``release`` is set (or
    fails after a while, so a search that holds the event loop fails instead of hanging)."""

    def __init__(self, kb: KnowledgeBase, release: threading.Event) -> None:
        self._kb = kb
        self.release = release
        self.name = kb.name
        self.embedder = kb.embedder

    def dense_search(self, *args: Any, **kwargs: Any) -> Any:
        if not self.release.wait(10):
            raise TimeoutError("the search blocked the loop that would have released it")
        return self._kb.dense_search(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kb, name)
