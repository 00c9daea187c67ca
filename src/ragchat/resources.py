"""Builds the long-lived resources (embedder, knowledge bases, retrievers) from ``Settings``.
The CLI and the server call these; nothing here parses user input or prints."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from ragchat.index.base import Embedder
from ragchat.index.kb import KnowledgeBase
from ragchat.settings import Settings

log = logging.getLogger(__name__)

SAMPLE_KB_DIR = Path(__file__).parent / "sample_kb"
SAMPLE_KBS = ("medical", "parenting", "textbook", "companion")


def embedder(settings: Settings) -> Embedder:
    from ragchat.index.embedder import load_embedder

    return load_embedder(settings)


def open_kb(settings: Settings, name: str, emb: Embedder | None = None) -> KnowledgeBase:
    return KnowledgeBase.open(settings.kb_root, name, emb or embedder(settings))


def open_or_create_kb(
    settings: Settings, name: str, emb: Embedder | None = None, *, dense_backend: str = "flat"
) -> KnowledgeBase:
    return KnowledgeBase.open_or_create(
        settings.kb_root,
        name,
        emb or embedder(settings),
        dense_backend=dense_backend,
        chunking=settings.chunking.model_dump(),
    )


def sample_sources(names: Sequence[str] = SAMPLE_KBS) -> dict[str, Path]:
    return {n: SAMPLE_KB_DIR / n for n in names if (SAMPLE_KB_DIR / n).is_dir()}
