"""``AgentWiring``: everything an agent graph is built from that is not data — settings, the
agent config, models, the memory and safety stages, the knowledge bases, the clock.

Frozen and complete when ``build_engine`` creates it: nothing is set on it afterwards, and
graph state never holds it (state stays data). Steps are chosen from it once, when each graph
is built (``shared/steps.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.retrievers import RetrieverCache
from ragchat.agents.shared.streaming import Streamer
from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatModel, GenerationOptions
from ragchat.safety.guard import SafetyGuard
from ragchat.settings import AgentSettings, Settings
from ragchat.store.memory import MemoryStore

Clock = Callable[[], float]


@dataclass(frozen=True)
class AgentWiring:
    settings: Settings
    app_config: AppConfig
    embedder: Embedder
    knowledge: RetrieverCache
    memory: MemoryStore
    chat_model: ChatModel | None = None  # None: every step runs its heuristic
    safety: SafetyGuard | None = None  # None: messages are not classified
    clock: Clock = time.perf_counter
    stream: Streamer = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stream", Streamer(self.settings.agents.words_per_delta))

    @property
    def tuning(self) -> AgentSettings:
        return self.settings.agents

    def options(self, node: str) -> GenerationOptions:
        """Generation options of a model call site ("router", "answer", ...)."""
        return self.settings.llm.options_for(node)

    def agent(self, name: str) -> AgentConfig:
        return self.app_config.agents[name]

    def label(self, agent: AgentConfig, step: str) -> str:
        """How warnings name a step: "agent medical: grade"."""
        return f"agent {agent.name}: {step}"
