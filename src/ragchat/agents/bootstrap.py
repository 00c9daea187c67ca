"""Start-up helpers shared by ``ragchat chat`` and the server: which agent config to use, and
ingesting the configured knowledge bases whose files are new or changed."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ragchat.agents.config import (
    AgentConfig,
    AppConfig,
    KnowledgeBaseConfig,
    load_config,
)
from ragchat.embed.base import Embedder
from ragchat.errors import KnowledgeBaseNotFound
from ragchat.ingestion.ingest import IngestReport, Progress, ingest_paths
from ragchat.ingestion.job import chunker_for
from ragchat.resources import SAMPLE_KB_DIR
from ragchat.settings import Settings
from ragchat.vectorstores import factory as stores

log = logging.getLogger(__name__)
SAMPLE = "sample"
_CONFIG_SUFFIXES = (".toml", ".yaml", ".yml")


def resolve_config(
    kb_or_config: str | None, settings: Settings, *, must_exist: bool = False
) -> AppConfig:
    """``"sample"``/``None`` → ``settings.config_file`` or the bundled default; a config file
    path → that file; anything else → the knowledge-base agent of that config (the one the
    server binds a user's knowledge base to: ``any_knowledge_base``) over that ingested
    knowledge base, so a script, the terminal and the server answer alike. ``must_exist``:
    a knowledge base's name must name one that is there (``require_knowledge_base``)."""
    if kb_or_config in (None, "", SAMPLE):
        return load_config(settings.config_file)
    assert kb_or_config is not None
    path = Path(kb_or_config).expanduser()
    if path.suffix in _CONFIG_SUFFIXES or path.is_file():
        return load_config(path)
    if must_exist:
        kb_or_config = require_knowledge_base(settings, kb_or_config)
    default = load_config(settings.config_file).kb_agents()
    agent = (
        default[0].model_copy(update={"knowledge_base": kb_or_config, "routable": True})
        if default
        else AgentConfig(
            kind="conversational_rag",
            knowledge_base=kb_or_config,
            any_knowledge_base=True,
            description=f"Answers questions from the {kb_or_config} knowledge base.",
        )
    )
    return AppConfig(
        knowledge_bases={kb_or_config: KnowledgeBaseConfig()},
        agents={agent.name or "documents": agent},
    )


def require_knowledge_base(settings: Settings, name: str) -> str:
    """``name`` as it is stored (in any case), or ``KnowledgeBaseNotFound`` naming where it
    was looked for, what is there, and how to create it — before anything is built, so a
    script or ``ragchat chat`` says so in one line rather than at the first question."""
    try:
        names = stores.vector_store(settings).names()
    except Exception:  # a store that cannot be listed: let opening it say why
        return name
    if name in names:
        return name
    same = [n for n in names if n.lower() == name.lower()]
    if same:
        return same[0]
    held = ", ".join(sorted(names)) or "none yet"
    raise KnowledgeBaseNotFound(
        f"no knowledge base {name!r} in {stores.where_knowledge_bases_live(settings)}; it holds: "
        f"{held}. Create it with `ragchat ingest <files or folder> --kb {name}`, or run from "
        "(or set RAGCHAT_DATA_DIR to) the data directory that holds it."
    )


@dataclass(frozen=True)
class IngestedKB:
    name: str
    report: IngestReport

    @property
    def changed(self) -> bool:
        r = self.report
        return bool(r.added_files or r.replaced_files or r.errors)


def ensure_knowledge_bases(
    settings: Settings,
    app_config: AppConfig,
    embedder: Embedder,
    *,
    progress: Progress | None = None,
) -> list[IngestedKB]:
    """Ingests every configured knowledge base's sources (files unchanged since the last run
    are only hashed, so this is cheap when nothing changed). KBs without sources are left to
    ``ragchat ingest``. ``progress`` is ``ingest_paths``'s: raising there stops the ingestion
    under way with nothing of it saved (the server stopping during start-up)."""
    out = []
    for name, kb_config in app_config.knowledge_bases.items():
        if not kb_config.sources:
            continue
        paths = [p for p in app_config.source_paths(name, SAMPLE_KB_DIR) if p.exists()]
        if not paths:
            log.warning("knowledge base %s: none of its sources exist", name)
            continue
        kb = stores.open_or_create_kb(settings, name, embedder)
        try:
            chunker = chunker_for(kb, settings.chunking)
            if progress is None:
                report = ingest_paths(kb, paths, chunker)
            else:
                report = ingest_paths(kb, paths, chunker, progress=progress)
        finally:
            kb.close()
        out.append(IngestedKB(name, report))
    return out
