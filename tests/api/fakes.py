"""A small scripted engine (the ``ChatEngine`` surface the API uses) and SSE helpers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.events import (
    CitationsEvent,
    FinalEvent,
    MetadataEvent,
    TokenEvent,
    TurnEvent,
)
from ragchat.agents.metadata import Routing, TurnMetadata
from ragchat.agents.request import TurnRequest, validate
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult, UserProfile
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.llm.base import ChatModel
from ragchat.types import Citation

CITATION = Citation(
    index=1,
    chunk_id="doc_c1",
    source="/srv/secret/path/notes.md",
    title="Notes",
    location="Intro",
    score=0.9,
    preview="Some passage.",
)


def fake_config() -> AppConfig:
    return AppConfig(
        agents={
            "echo": AgentConfig(kind="support", description="Echoes what you say."),
            "other": AgentConfig(kind="support", description="Another agent."),
        }
    )


@dataclass
class FakeEngine:
    """Replies "echo: <message>" as three-word tokens. ``error`` is raised by ``run_turn`` and
    by ``stream_turn`` after ``fail_after`` tokens; ``hang_after`` tokens the stream waits
    forever (for disconnect tests). ``closed`` records that the stream was closed."""

    error: BaseException | None = None
    fail_after: int = 0
    hang_after: int | None = None
    # CPU-style blocking work: run_turn sets ``entered`` then holds the engine's event loop
    # (a thread block, not an await) until ``release`` is set.
    release: threading.Event | None = None
    entered: threading.Event = field(default_factory=threading.Event)
    calls: list[dict[str, Any]] = field(default_factory=list)
    validated: list[str] = field(default_factory=list)  # messages ``validate`` was asked about
    closed: bool = False
    app_config: AppConfig = field(default_factory=fake_config)
    embedder: Embedder = field(default_factory=HashingEmbedder)
    chat_model: ChatModel | None = None

    @property
    def agents(self) -> dict[str, AgentConfig]:
        return dict(self.app_config.agents)

    async def aclose(self) -> None:
        pass

    async def coverage(
        self, question: str, probes: Sequence[tuple[str, str]], user_id: str
    ) -> list[float]:
        return [0.0 for _ in probes]

    def _result(
        self, message: str, options: TurnOptions | None, conversation: ConversationState
    ) -> TurnResult:
        """``my name is X`` updates the profile, like the companion does."""
        agent = (options.agent if options else None) or "echo"
        profile = None
        if message.lower().startswith("my name is "):
            name = message.split()[-1]
            profile = conversation.user_profile.merged(UserProfile(name=name))
        routing = Routing(agent, "scripted", 1.0, reassigned=False, router="forced")
        metadata = TurnMetadata(routing=routing, assigned_agent=agent, user_profile=profile)
        return TurnResult(
            reply=f"echo: {message}", agent=agent, metadata=metadata, citations=[CITATION]
        )

    def validate(self, request: TurnRequest) -> TurnRequest:
        """The engine's own validation: the fake refuses what ``ChatEngine`` refuses."""
        self.validated.append(request.message)
        return validate(request, self.agents)

    async def run_turn(self, request: TurnRequest) -> TurnResult:
        request = validate(request, self.agents)
        conversation, message, options = request.conversation, request.message, request.options
        self.calls.append(
            {"conversation": conversation, "message": message, "user": request.user_id}
        )
        self.entered.set()
        if self.release is not None and not self.release.wait(60):
            raise TimeoutError("the test never released the blocked turn")
        if self.error is not None:
            raise self.error
        return self._result(message, options, conversation)

    async def stream_turn(self, request: TurnRequest) -> AsyncGenerator[TurnEvent, None]:
        request = validate(request, self.agents)
        conversation, message, options = request.conversation, request.message, request.options
        self.calls.append(
            {"conversation": conversation, "message": message, "user": request.user_id}
        )
        result = self._result(message, options, conversation)
        words = result.reply.split(" ")
        try:
            yield MetadataEvent(result.agent, result.metadata.routing)
            for i, word in enumerate(words):
                if self.error is not None and i == self.fail_after:
                    raise self.error
                if self.hang_after is not None and i == self.hang_after:
                    # A nested task, as in LangGraph: cancelling it takes several loop turns.
                    await asyncio.get_running_loop().create_task(asyncio.sleep(3600))
                yield TokenEvent(word if i == 0 else " " + word)
            yield CitationsEvent(tuple(result.citations))
            yield FinalEvent(result)
        finally:
            self.closed = True

    async def title(self, first_user: str, first_reply: str = "") -> str:
        return f"About {first_user}"


def parse_sse(text: str) -> list[tuple[str | None, Any]]:
    """(event, JSON data or raw string) per event."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        raw = "\n".join(data)
        try:
            events.append((name, json.loads(raw)))
        except json.JSONDecodeError:
            events.append((name, raw))
    return events
