"""The registry of agent kinds: what ``kind = "..."`` in an agents config may name.

A kind is a name, a builder (``AgentWiring``, ``AgentConfig`` → an ``AgentRunner``) and two
facts the rest of ragchat needs without building it: whether it needs a knowledge base, and
whether it answers questions from one (``POST /query`` picks such an agent). Builders are given
as "module:function" and imported on first use, so reading a config never imports LangGraph.

A new kind needs no edit here: call ``register_kind`` before loading the config, or publish an
``AgentKind`` under the ``ragchat.agent_kinds`` entry-point group of your package::

    [project.entry-points."ragchat.agent_kinds"]
    faq = "my_package.faq:KIND"
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from ragchat.errors import ConfigError

if TYPE_CHECKING:
    from ragchat.agents.shared.state import AgentRunner

# (AgentWiring, AgentConfig) -> AgentRunner. The registry sits below the config that names its
# kinds and the wiring that builds them, so it takes them untyped; agents/factory.py passes them.
AgentBuilder = Callable[[Any, Any], "AgentRunner"]
ENTRY_POINT_GROUP = "ragchat.agent_kinds"


@dataclass(frozen=True)
class AgentKind:
    name: str
    builder: str | AgentBuilder  # "package.module:function", or the function itself
    needs_knowledge_base: bool = False
    answers_questions: bool = False

    def build(self, wiring: Any, agent: Any) -> AgentRunner:
        builder = self.builder
        if isinstance(builder, str):
            module, _, name = builder.partition(":")
            builder = getattr(importlib.import_module(module), name)
        return builder(wiring, agent)


BUILT_IN: tuple[AgentKind, ...] = (
    AgentKind("support", "ragchat.agents.support.graph:build_agent"),
    AgentKind(
        "rag",
        "ragchat.agents.rag.graph:build_agent",
        needs_knowledge_base=True,
        answers_questions=True,
    ),
    AgentKind(
        "corrective_rag",
        "ragchat.agents.corrective_rag.graph:build_agent",
        needs_knowledge_base=True,
        answers_questions=True,
    ),
    AgentKind(
        "conversational_rag",
        "ragchat.agents.conversational_rag.graph:build_agent",
        needs_knowledge_base=True,
        answers_questions=True,
    ),
    AgentKind("companion", "ragchat.agents.companion.graph:build_agent"),
)

_kinds: dict[str, AgentKind] = {kind.name: kind for kind in BUILT_IN}
_lock = threading.Lock()
_plugins_loaded = False


def register_kind(kind: AgentKind, *, replace: bool = False) -> None:
    """Makes ``kind.name`` usable in agent configs (``replace`` to override a registered one)."""
    with _lock:
        if kind.name in _kinds and not replace and _kinds[kind.name] != kind:
            raise ConfigError(f"agent kind {kind.name!r} is already registered")
        _kinds[kind.name] = kind


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        kind = point.load()
        if not isinstance(kind, AgentKind):
            raise ConfigError(f"entry point {point.value!r} ({ENTRY_POINT_GROUP}) is no AgentKind")
        register_kind(kind)


def kind_names() -> list[str]:
    _load_plugins()
    return sorted(_kinds)


def get_kind(name: str) -> AgentKind:
    if name not in _kinds:
        _load_plugins()
    try:
        return _kinds[name]
    except KeyError:
        known = ", ".join(kind_names())
        raise ConfigError(f"unknown agent kind {name!r}; known kinds: {known}") from None
