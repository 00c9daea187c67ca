"""The companion's persona: a Markdown/text file with optional front matter ``name``."""

from __future__ import annotations

from dataclasses import dataclass

import frontmatter

from ragchat.agents.config import AgentConfig, AppConfig


@dataclass(frozen=True)
class Persona:
    name: str
    text: str


def load_persona(app_config: AppConfig, agent: AgentConfig) -> Persona:
    """Front matter ``name`` (else the agent's name, title-cased) and the body (else the
    agent's description). ``ConfigError`` when the file cannot be read."""
    raw = app_config.persona_text(agent)
    post = frontmatter.loads(raw) if raw else None
    name = str(post.metadata.get("name", "")) if post else ""
    text = post.content.strip() if post else agent.description
    return Persona(name or agent.name.title(), text)
