"""Fixtures for the heuristic steps: the fast hashing embedder for unit tests and the real
all-MiniLM-L6-v2 (packaged weights, loaded once per session) where answer quality matters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings
from ragchat.types import Chunk, Hit

HitFactory = Callable[..., Hit]


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    from ragchat.embed.factory import load_embedder

    return load_embedder(Settings(config_file=None))


@pytest.fixture
def hashing() -> HashingEmbedder:
    return HashingEmbedder()


def make_hit(
    chunk_id: str,
    text: str,
    *,
    title: str = "Doc",
    doc_id: str | None = None,
    score: float = 0.6,
    position: int = 0,
    context: str | None = None,
    **metadata: Any,
) -> Hit:
    md = {"source": f"{doc_id or chunk_id}.md", "doc_title": title, **metadata}
    chunk = Chunk(chunk_id, doc_id or chunk_id, text, position, metadata=md)
    return Hit(chunk=chunk, score=score, scores={"dense": score}, context=context)


@pytest.fixture
def hit() -> HitFactory:
    return make_hit
