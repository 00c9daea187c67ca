"""Title field: BM25 of the query against document titles, fused as a third signal.

Titles carry the topic of a document ("Acromegaly", the title of an abstract), and a query that
names the topic should prefer its documents even when the body text is long and about many
things. The knowledge base's own BM25 index mixes title and body tokens; this keeps a second,
small BM25 index over the titles alone, built in memory on first use from the chunk store and
rebuilt when the knowledge base changes. Only candidates already found by the dense / BM25
passes are scored, so filters apply as usual.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ragchat.types import Chunk
from ragchat.vectorstores.base import ListsChildren, SearchableKB
from ragchat.vectorstores.bm25 import BM25Index


def chunk_title(chunk: Chunk) -> str:
    """A chunk's document title: ``title`` metadata (JSONL records, Markdown frontmatter or
    first heading), else ``doc_title``, else the top heading of its path."""
    md = chunk.metadata
    for key in ("title", "doc_title"):
        value = md.get(key)
        if value not in (None, ""):
            return str(value)
    path = md.get("heading_path") or []
    return str(path[0]) if path else ""


class TitleIndex:
    """BM25 over the titles of a set of chunks, addressed by chunk id."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        ids: list[str] = []
        titles: list[str] = []
        for chunk in chunks:
            ids.append(chunk.chunk_id)
            titles.append(chunk_title(chunk))
        self._row_of = {cid: i for i, cid in enumerate(ids)}
        self._bm25 = BM25Index()
        self._bm25.add(np.arange(len(ids), dtype=np.int64), titles)

    def __len__(self) -> int:
        return len(self._row_of)

    def scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        """BM25 of ``query`` against each chunk's title (0.0 for unknown chunks)."""
        if not chunk_ids or not len(self):
            return [0.0] * len(chunk_ids)
        labels = np.asarray([self._row_of.get(c, -1) for c in chunk_ids], dtype=np.int64)
        return [float(s) for s in self._bm25.scores(query, labels)]


_cache: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], TitleIndex]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def title_index(kb: SearchableKB) -> TitleIndex | None:
    """The title index of ``kb`` (built once, rebuilt when its version changes); None when the
    knowledge base cannot list its chunks (``ListsChildren``)."""
    if not isinstance(kb, ListsChildren):
        return None
    version = kb.version()
    with _lock:
        try:
            cached = _cache.get(kb)
        except TypeError:  # not weak-referenceable: build every time
            cached = None
        if cached is not None and cached[0] == version:
            return cached[1]
        index = TitleIndex(kb.children())
        with contextlib.suppress(TypeError):  # not weak-referenceable: not cached
            _cache[kb] = (version, index)
        return index
