"""Agents and knowledge bases are declared in a TOML or YAML file, so a deployment can be a
medical assistant, a textbook tutor or a companion without code changes."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from ragchat.agents.kinds import get_kind
from ragchat.errors import ConfigError
from ragchat.settings import RetrievalSettings

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "agents.toml"
SAMPLE_PREFIX = "sample:"


class KnowledgeBaseConfig(BaseModel):
    # Folders or files ingested into this knowledge base on first start; "sample:NAME" points
    # at a knowledge base bundled with ragchat.
    sources: list[str] = []
    description: str = ""


class TemplateIntent(BaseModel):
    """A canned answer for a recognisable request (e.g. "find a provider near me")."""

    description: str
    examples: list[str] = Field(min_length=1)
    response: str


class AgentConfig(BaseModel):
    name: str = ""
    kind: str  # a registered agent kind (ragchat.agents.kinds)
    description: str
    examples: list[str] = []
    knowledge_base: str | None = None
    # Answers over whichever knowledge bases a conversation is bound to (a user's own, chosen
    # per conversation) instead of, or besides, its own ``knowledge_base``.
    any_knowledge_base: bool = False
    routable: bool = True  # offered to the supervisor; otherwise reachable only by name
    disclaimer: str = ""
    no_answer_message: str = (
        "I couldn't find this in my documents, so I won't guess. Try rephrasing, or ask a "
        "professional who can look at your situation."
    )
    prompts: dict[str, str] = {}  # overrides of the agent kind's prompts.py templates, by key
    retrieval: dict[str, Any] = {}  # RetrievalSettings overrides for this agent
    gate_threshold: float | None = None
    intents: dict[str, TemplateIntent] = {}  # conversational_rag template intents
    # conversational_rag: a request that names no topic ("Can I stop taking it once I feel
    # better?") is searched first and answered when the search is clearly on topic (relevance
    # at least this); below it, or None, the agent asks a clarifying question straight away.
    # On a user's own few documents the topic is often the knowledge base itself.
    clarify_below: float | None = None
    persona_file: str | None = None  # companion persona (Markdown/text), relative to the config
    persona_knowledge_base: str | None = None  # companion's own facts (get_self_info)
    textbook_modes: bool = False  # rag: chapter-aware and selected-text-only modes

    @field_validator("kind")
    @classmethod
    def _registered(cls, kind: str) -> str:
        try:
            get_kind(kind)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return kind

    @model_validator(mode="after")
    def _needs_kb(self) -> AgentConfig:
        kind = get_kind(self.kind)
        if kind.needs_knowledge_base and not (self.knowledge_base or self.any_knowledge_base):
            raise ValueError(f"agent kind {self.kind!r} needs a knowledge_base")
        if self.any_knowledge_base and not kind.answers_questions:
            raise ValueError(f"agent kind {self.kind!r} cannot answer over any knowledge base")
        return self

    def retrieval_settings(self, base: RetrievalSettings) -> RetrievalSettings:
        update = dict(self.retrieval)
        if self.gate_threshold is not None:
            update["gate_threshold"] = self.gate_threshold
        try:
            return RetrievalSettings.model_validate({**base.model_dump(), **update})
        except ValidationError as exc:
            raise ConfigError(f"agent {self.name!r}: bad retrieval settings: {exc}") from exc


class SupervisorConfig(BaseModel):
    # Below this routing confidence the supervisor still picks the best agent but says so in
    # the metadata; a later message reassigns only above ``switch_confidence``.
    min_confidence: float = 0.35
    switch_confidence: float = 0.6
    # ... and only when the current agent scores at least this much lower (see
    # ragchat.agents.supervisor.routing for the whole reassignment rule).
    switch_margin: float = 0.1
    default_agent: str | None = None
    switch_phrases: list[str] = [
        "switch topic",
        "change topic",
        "new topic",
        "talk about something else",
    ]


class AppConfig(BaseModel):
    knowledge_bases: dict[str, KnowledgeBaseConfig] = {}
    agents: dict[str, AgentConfig] = {}
    supervisor: SupervisorConfig = SupervisorConfig()
    retrieval_configs: dict[str, dict[str, Any]] = {}  # named configurations for `ragchat eval`
    base_dir: Path = Path(".")

    @model_validator(mode="after")
    def _check(self) -> AppConfig:
        if not self.agents:
            raise ValueError("no agents are configured")
        for name, agent in self.agents.items():
            agent.name = name
            for kb in (agent.knowledge_base, agent.persona_knowledge_base):
                if kb and kb not in self.knowledge_bases:
                    raise ValueError(f"agent {name!r} uses unknown knowledge base {kb!r}")
        default = self.supervisor.default_agent
        if default and default not in self.agents:
            raise ValueError(f"supervisor.default_agent {default!r} is not an agent")
        return self

    def with_no_answer_messages(self, messages: dict[str, str]) -> AppConfig:
        """This config with these agents' refusal texts replaced (``Settings.compat``)."""
        unknown = sorted(set(messages) - set(self.agents))
        if unknown:
            raise ConfigError(
                f"compat.no_answer_messages names unknown agent(s) {', '.join(unknown)}; "
                f"configured: {', '.join(sorted(self.agents))}"
            )
        if not messages:
            return self
        agents = {
            name: agent.model_copy(update={"no_answer_message": messages[name]})
            if name in messages
            else agent
            for name, agent in self.agents.items()
        }
        return self.model_copy(update={"agents": agents})

    def routable(self) -> list[AgentConfig]:
        return [a for a in self.agents.values() if a.routable]

    def kb_agents(self) -> list[AgentConfig]:
        """The agents that answer over a conversation's own knowledge bases."""
        return [a for a in self.agents.values() if a.any_knowledge_base]

    def source_paths(self, kb: str, sample_root: Path) -> list[Path]:
        out = []
        for src in self.knowledge_bases[kb].sources:
            if src.startswith(SAMPLE_PREFIX):
                out.append(sample_root / src[len(SAMPLE_PREFIX) :])
            else:
                path = Path(src).expanduser()
                out.append(path if path.is_absolute() else self.base_dir / path)
        return out

    def persona_text(self, agent: AgentConfig) -> str:
        if not agent.persona_file:
            return ""
        path = self.base_dir / agent.persona_file
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"agent {agent.name!r}: cannot read persona file {path}: {exc}"
            ) from exc


def load_config(path: Path | None = None) -> AppConfig:
    """Reads TOML (``.toml``) or YAML (``.yaml``/``.yml``); the bundled default when ``None``."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(raw.decode("utf-8"))
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(raw) or {}
        else:
            raise ConfigError(f"{path}: config files must be .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a table/mapping")
    try:
        return AppConfig.model_validate({**data, "base_dir": path.resolve().parent})
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid config: {exc}") from exc
