"""Embedding reuse: a turn embeds its message once, and a chunk's sentences once per process.

One chat turn used to embed the same message three or four times (the safety check, the
router, retrieval, the composer) and up to ~100 candidate sentences of the retrieved chunks on
every reply, although the same chunks come back turn after turn. ``CachedEmbedder`` wraps any
``Embedder`` (usually the micro-batcher, ``batching.py``) and keeps:

- query vectors by text (``embed_query``), and the vectors of small ``embed_documents`` calls
  (a message's safety check) by text — for a ``symmetric`` inner embedder (the same vector
  either way) both share one memo, so the safety check's vector serves routing, retrieval and
  composition;
- sentence vectors per chunk (``embed_owned``), keyed by chunk id and a hash of the sentence
  text: a change in how sentences are split or cleaned gives new keys, never a stale vector.

Both memos are bounded LRUs, thread-safe; large ``embed_documents`` calls (ingestion) pass
through uncached. The sentence vectors can be saved and loaded by content hash
(``save_sentences``/``load_sentences``): the server keeps them across restarts.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector

SMALL_CALL = 8  # embed_documents calls of at most this many texts are memoised by text


class _LRU:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[Hashable, Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Vector | None:
        with self._lock:
            vec = self._data.get(key)
            if vec is not None:
                self._data.move_to_end(key)
            return vec

    def put(self, key: Hashable, vec: Vector) -> None:
        if self.capacity <= 0:
            return
        if vec.flags.writeable:  # an own, read-only copy: callers cannot alter it
            vec = np.array(vec, dtype=np.float32)
            vec.flags.writeable = False
        with self._lock:
            self._data[key] = vec
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def items(self) -> list[tuple[Hashable, Vector]]:
        with self._lock:
            return list(self._data.items())


_HASH_BYTES = 16


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_HASH_BYTES).digest()


class CachedEmbedder:
    """See the module docstring. ``queries`` and ``sentences`` bound the two memos (entries);
    0 turns one off."""

    def __init__(self, inner: Embedder, *, queries: int = 1024, sentences: int = 20_000) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dim = inner.dim
        self.symmetric = bool(getattr(inner, "symmetric", False))
        self._texts = _LRU(queries)
        self._sentences = _LRU(sentences)
        # The same sentence reached through another chunk (a neighbour-expanded context, two
        # children of one parent) reuses the vector: content-addressed, so never stale.
        self._by_text = _LRU(sentences)
        self.prewarmed = False  # set when the knowledge bases' sentences were embedded ahead

    def _key(self, text: str, *, query: bool) -> Hashable:
        return text if self.symmetric else (query, text)

    def embed_query(self, text: str) -> Vector:
        key = self._key(text, query=True)
        vec = self._texts.get(key)
        if vec is None:
            vec = np.asarray(self.inner.embed_query(text), dtype=np.float32)
            self._texts.put(key, vec)
        return np.array(vec)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        if progress or len(texts) > SMALL_CALL:
            return np.asarray(self.inner.embed_documents(texts, progress=progress), np.float32)
        keys = [self._key(t, query=False) for t in texts]
        return self._fill(keys, texts, self._texts)

    def embed_owned(self, owners: Sequence[str], texts: Sequence[str]) -> Matrix:
        """Vectors of ``texts`` (sentences of the chunks ``owners``), computed once per chunk
        and sentence text; misses are embedded in one call."""
        hashes = [text_key(t) for t in texts]
        keys = [(o, h) for o, h in zip(owners, hashes, strict=True)]
        return self._fill(keys, texts, self._sentences, hashes)

    def save_sentences(self, path: Path) -> int:
        """Writes the sentence memo (vectors by content hash) for ``load_sentences`` after a
        restart; atomic (a crash leaves the old file or none). Returns the entries written."""
        items = [(h, v) for h, v in self._by_text.items() if isinstance(h, bytes)]
        hashes = np.frombuffer(b"".join(h for h, _ in items), dtype=np.uint8)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as fh:
            np.savez(
                fh,
                model=np.array(self.model_name),
                hashes=hashes.reshape(-1, _HASH_BYTES),
                vectors=(
                    np.stack([v for _, v in items])
                    if items
                    else np.zeros((0, self.dim), dtype=np.float32)
                ),
            )
        os.replace(tmp, path)
        return len(items)

    def load_sentences(self, path: Path) -> int:
        """Vectors saved by ``save_sentences`` for this model and dimension (a file of another
        model, or unreadable, is ignored: they are recomputed). Returns the entries loaded."""
        try:
            with np.load(path, allow_pickle=False) as data:
                model, hashes, vectors = str(data["model"]), data["hashes"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return 0
        if (
            model != self.model_name
            or vectors.ndim != 2
            or vectors.shape[1] != self.dim
            or hashes.shape != (len(vectors), _HASH_BYTES)
        ):
            return 0
        for h, vec in zip(hashes, vectors.astype(np.float32), strict=True):
            self._by_text.put(h.tobytes(), vec)
        return len(hashes)

    def stats(self) -> dict[str, object]:
        return {
            "cached_queries": len(self._texts),
            "cached_sentences": len(self._sentences),
            "sentences_prewarmed": self.prewarmed,
        }

    def _fill(
        self,
        keys: Sequence[Hashable],
        texts: Sequence[str],
        memo: _LRU,
        hashes: Sequence[bytes] | None = None,
    ) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}  # text → rows: one text of several chunks, once
        for i, key in enumerate(keys):
            vec = memo.get(key)
            if vec is None and hashes is not None:
                vec = self._by_text.get(hashes[i])
                if vec is not None:
                    memo.put(key, vec)
            if vec is None:
                missing.setdefault(texts[i], []).append(i)
            else:
                out[i] = vec
        if missing:
            vecs = np.asarray(self.inner.embed_documents(list(missing)), dtype=np.float32)
            for rows, vec in zip(missing.values(), vecs, strict=True):
                for i in rows:
                    memo.put(keys[i], vec)
                if hashes is not None:
                    self._by_text.put(hashes[rows[0]], vec)
                out[rows] = vec
        return out


def embed_sentences(embedder: Embedder, owners: Sequence[str], texts: Sequence[str]) -> Matrix:
    """Sentence vectors through the embedder's per-chunk cache when it has one (see
    ``CachedEmbedder``), else one plain ``embed_documents`` call."""
    owned = getattr(embedder, "embed_owned", None)
    if owned is not None:
        return np.asarray(owned(owners, texts), dtype=np.float32)
    return np.asarray(embedder.embed_documents(list(texts)), dtype=np.float32)


def fast_embedder(
    inner: Embedder,
    *,
    queries: int = 1024,
    sentences: int = 20_000,
    batch_wait_ms: float = 2.0,
    max_batch: int = 64,
) -> Embedder:
    """``inner`` behind the micro-batcher and the caches (idempotent: an embedder already
    wrapped is returned as is). ``batch_wait_ms`` 0 and ``max_batch`` 1 turn batching off."""
    from ragchat.embed.batching import MicroBatchingEmbedder

    if isinstance(inner, CachedEmbedder):
        return inner
    batched: Embedder = inner
    if max_batch > 1:
        batched = MicroBatchingEmbedder(inner, max_wait_ms=batch_wait_ms, max_batch=max_batch)
    return CachedEmbedder(batched, queries=queries, sentences=sentences)
