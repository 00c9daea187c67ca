"""Sentence vectors ahead of the first question: the extractive composer's candidates of every
passage of the agents' knowledge bases, embedded into the embedder's per-chunk cache
(``embed/cache.py``), and their words for the refusal checks (``heuristics/coverage.py``), so an
offline turn embeds only its message.

Run in a background thread at server start (``start_prewarm``): turns are served meanwhile
(their embeddings join the same micro-batches), and a turn that arrives first simply embeds
what it needs itself. Nothing is warmed when a chat model writes the answers."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from ragchat.agents.engine import ChatEngine
from ragchat.embed.cache import CachedEmbedder
from ragchat.errors import RagchatError
from ragchat.reader.candidates import warm_sentences
from ragchat.reader.coverage import passage_words, warm_words
from ragchat.retrieve.postprocess import resolve_parents
from ragchat.types import Hit
from ragchat.vectorstores.base import ListsChildren

log = logging.getLogger(__name__)
GROUP = 8  # children whose parents are resolved together


def prewarm_sentences(engine: ChatEngine, stop: threading.Event | None = None) -> int:
    """Embeds the quotable sentences of every knowledge base an agent answers from (at most
    as many as the cache holds); returns the number of texts embedded or found cached."""
    wiring = engine.wiring
    if wiring.chat_model is not None:
        return 0
    capacity = wiring.settings.embedding.sentence_cache
    names = {a.knowledge_base for a in engine.agents.values() if a.knowledge_base}
    count = 0
    start = time.perf_counter()
    embedder = wiring.embedder
    saved = sentence_file(wiring.settings.data_dir)
    if isinstance(embedder, CachedEmbedder):
        loaded = embedder.load_sentences(saved)
        log.info("sentence vectors: %d loaded from %s", loaded, saved)
    try:
        count = _warm(engine, sorted(names), capacity, stop)
    finally:
        if isinstance(embedder, CachedEmbedder):
            embedder.save_sentences(saved)
    log.info("sentence vectors ready: %d texts in %.1f s", count, time.perf_counter() - start)
    return count


def sentence_file(data_dir: Path) -> Path:
    """Where the server keeps its sentence vectors between runs (content-addressed: a changed
    document or sentence splitting only adds entries; another model's file is ignored)."""
    return data_dir / "cache" / "sentence-vectors.npz"


def _warm(engine: ChatEngine, names: list[str], capacity: int, stop: threading.Event | None) -> int:
    wiring = engine.wiring
    count = 0
    words_seen: set[str] = set()
    for name in names:
        try:
            kb = wiring.knowledge.knowledge_base(name)
        except RagchatError as exc:
            log.info("sentence prewarm skips knowledge base %s: %s", name, exc)
            continue
        if not isinstance(kb, ListsChildren):
            continue
        children = kb.children()
        for i in range(0, len(children), GROUP):
            if stop is not None and stop.is_set():
                return count
            if count >= capacity:
                break
            hits = resolve_parents(kb, [Hit(c, 0.0) for c in children[i : i + GROUP]], GROUP)
            count += warm_sentences(hits, wiring.embedder)
            texts = [h.context or h.chunk.text for h in hits]
            fresh = [w for w in passage_words(texts) if w not in words_seen]
            words_seen.update(fresh)
            count += warm_words(fresh, wiring.embedder)
    if isinstance(wiring.embedder, CachedEmbedder):
        wiring.embedder.prewarmed = True
    return count


def start_prewarm(engine: ChatEngine) -> threading.Event:
    """``prewarm_sentences`` in a daemon thread; set the returned event to stop it early."""
    stop = threading.Event()

    def run() -> None:
        try:
            prewarm_sentences(engine, stop)
        except Exception:  # a warm-up problem must never take the server down
            log.exception("sentence prewarm failed; answers embed their sentences themselves")

    threading.Thread(target=run, name="ragchat-sentence-prewarm", daemon=True).start()
    return stop
