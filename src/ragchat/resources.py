"""Builds the long-lived resources (embedder, knowledge bases, retrievers) from ``Settings``.
The CLI and the server call these; nothing here parses user input or prints."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

from ragchat.embed.base import Embedder
from ragchat.settings import Settings
from ragchat.vectorstores import factory as stores
from ragchat.vectorstores.base import WritableKB

log = logging.getLogger(__name__)

SAMPLE_KB_DIR = Path(__file__).parent / "sample_kb"
SAMPLE_KBS = ("medical", "parenting", "textbook", "companion")


# The packaged model is loaded once per process (``load_embedder``); so is its fast path.
_FAST: dict[tuple[int, float, int, int, int], Embedder] = {}
_FAST_LOCK = threading.Lock()


def embedder(settings: Settings) -> Embedder:
    """The configured model behind the micro-batcher and the vector caches; one per process
    and configuration, so every user of it shares its batches and memos."""
    from ragchat.embed.factory import load_embedder

    inner = load_embedder(settings)  # cached for the process: its id is stable
    cfg = settings.embedding
    key = (id(inner), cfg.batch_wait_ms, cfg.max_batch, cfg.query_cache, cfg.sentence_cache)
    with _FAST_LOCK:
        if key not in _FAST:
            _FAST[key] = fast(inner, settings)
        return _FAST[key]


def ingest_embedder(settings: Settings, queries: Embedder | None = None) -> Embedder:
    """What knowledge bases are written with: documents through ``embedding.ingest_backend``
    (int8 by default: the fast one), queries through ``queries`` (default: ``embedder``).
    Pass ``queries`` only when it is the configured model (a hand-built embedder, e.g. a test's
    fake, is used for both)."""
    from ragchat.embed.factory import IngestEmbedder, ingest_settings, load_embedder

    base = queries if queries is not None else embedder(settings)
    other = ingest_settings(settings)
    if other is None:
        return base
    return IngestEmbedder(base, load_embedder(other))


def fast(inner: Embedder, settings: Settings) -> Embedder:
    """``inner`` on the fast answer path (``index/cache.fast_embedder``); an embedder already
    on it is returned as is."""
    from ragchat.embed.cache import fast_embedder

    cfg = settings.embedding
    return fast_embedder(
        inner,
        queries=cfg.query_cache,
        sentences=cfg.sentence_cache,
        batch_wait_ms=cfg.batch_wait_ms,
        max_batch=cfg.max_batch,
    )


def open_kb(settings: Settings, name: str, emb: Embedder | None = None) -> WritableKB:
    """The knowledge base in the configured vector store (embedded files or Qdrant)."""
    return stores.open_kb(settings, name, emb or embedder(settings))


def open_or_create_kb(
    settings: Settings, name: str, emb: Embedder | None = None, *, dense_backend: str = "flat"
) -> WritableKB:
    return stores.open_or_create_kb(
        settings, name, emb or embedder(settings), dense_backend=dense_backend
    )


def sample_sources(names: Sequence[str] = SAMPLE_KBS) -> dict[str, Path]:
    return {n: SAMPLE_KB_DIR / n for n in names if (SAMPLE_KB_DIR / n).is_dir()}
