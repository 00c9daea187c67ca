"""Agent names as the replaced systems' clients say them (``Settings.compat``): seed 000's
client reads ``rag_agent`` where ragchat's agent is ``medical``; seed 001's names no agent and
means the companion."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ragchat.errors import ConfigError
from ragchat.settings import CompatSettings


@dataclass(frozen=True)
class AgentNames:
    """Agent names as the clients say them (``Settings.compat``): the agent of a turn that
    names none, and the clients' names for configured agents, both ways."""

    default: str | None
    aliases: Mapping[str, str]  # configured agent → the clients' name

    @classmethod
    def of(cls, compat: CompatSettings, agents: Collection[str]) -> AgentNames:
        """Checked against the configured agents once, at start-up (``ConfigError``)."""
        configured = ", ".join(sorted(agents))
        unknown = sorted(set(compat.agent_aliases) - set(agents))
        if unknown:
            raise ConfigError(
                f"compat.agent_aliases names unknown agent(s) {', '.join(unknown)}; "
                f"configured: {configured}"
            )
        names = list(compat.agent_aliases.values())
        clash = sorted(
            {n for n in names if names.count(n) > 1}
            | {n for a, n in compat.agent_aliases.items() if n in agents and n != a}
        )
        if clash:
            raise ConfigError(
                f"compat.agent_aliases gives two agents the name(s) {', '.join(clash)}"
            )
        names_of = cls(None, dict(compat.agent_aliases))
        default = names_of.resolve(compat.default_agent)
        if default is not None and default not in agents:
            raise ConfigError(
                f"compat.default_agent {compat.default_agent!r} is not an agent; "
                f"configured: {configured}"
            )
        return cls(default, names_of.aliases)

    def resolve(self, name: str | None) -> str | None:
        """The configured agent a request names (its own name or the clients' name); None:
        the default agent, or None for the supervisor's routing."""
        if name is None:
            return self.default
        return next((agent for agent, alias in self.aliases.items() if alias == name), name)

    def public(self, agent: str) -> str:
        """The name a reply gives the agent."""
        return self.aliases.get(agent, agent)
