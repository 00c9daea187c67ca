"""Test data and a recording wrapper around a knowledge base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragchat.embed.base import Embedder, Vector
from ragchat.types import Chunk
from ragchat.vectorstores.base import SearchableKB

# doc id -> (source, chapter, [parent groups of child texts])
DOCS: dict[str, tuple[str, str, list[list[str]]]] = {
    "pets": (
        "pets.md",
        "animals",
        [
            [
                "Cats are small domestic felines that purr and sleep most of the day.",
                "A cat grooms its fur with a rough tongue and hunts mice at night.",
            ],
            [
                "Dogs are loyal companions that need daily walks and training.",
                "Puppies learn commands like sit and stay with patient positive rewards.",
            ],
        ],
    ),
    "space": (
        "space.md",
        "astronomy",
        [
            [
                "The Moon orbits the Earth every 27 days and causes ocean tides.",
                "Mars is a cold desert planet with a thin carbon dioxide atmosphere.",
            ],
            ["Jupiter is the largest planet and has a great red storm."],
        ],
    ),
    "kitchen": (
        "kitchen.md",
        "cooking",
        [
            [
                "Bread dough needs flour, water, yeast and salt, then kneading and proofing.",
                "Sourdough uses a wild yeast starter instead of commercial yeast.",
                "Bake the loaf in a hot oven until the crust is golden brown.",
            ]
        ],
    ),
}


def build_chunks(docs: dict[str, tuple[str, str, list[list[str]]]]) -> list[Chunk]:
    """Children ``<doc>:c<position>`` and parents ``<doc>:p<n>`` (parent text = its children)."""
    chunks: list[Chunk] = []
    for doc_id, (source, chapter, groups) in docs.items():
        position = 0
        for p, group in enumerate(groups):
            parent_id = f"{doc_id}:p{p}"
            meta: dict[str, Any] = {"source": source, "chapter": chapter}
            chunks.append(
                Chunk(parent_id, doc_id, " ".join(group), p, is_parent=True, metadata=dict(meta))
            )
            for text in group:
                chunks.append(
                    Chunk(
                        f"{doc_id}:c{position}",
                        doc_id,
                        text,
                        position,
                        parent_id,
                        metadata=dict(meta),
                    )
                )
                position += 1
    return chunks


class SpyKB:
    """Delegates to a real knowledge base and records which read calls were made."""

    def __init__(self, inner: SearchableKB) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.embedder: Embedder = inner.embedder
        self.calls: list[tuple[str, Any]] = []

    def called(self, method: str) -> list[Any]:
        return [args for name, args in self.calls if name == method]

    def dense_search(
        self, query_vec: Vector, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        self.calls.append(("dense_search", (k, filters)))
        return self.inner.dense_search(query_vec, k, filters)

    def bm25_search(
        self, query: str, k: int, filters: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        self.calls.append(("bm25_search", (query, k, filters)))
        return self.inner.bm25_search(query, k, filters)

    def dense_scores(self, query_vec: Vector, chunk_ids: Sequence[str]) -> list[float]:
        self.calls.append(("dense_scores", list(chunk_ids)))
        return self.inner.dense_scores(query_vec, chunk_ids)

    def bm25_scores(self, query: str, chunk_ids: Sequence[str]) -> list[float]:
        self.calls.append(("bm25_scores", list(chunk_ids)))
        return self.inner.bm25_scores(query, chunk_ids)

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        self.calls.append(("get_chunks", list(chunk_ids)))
        return self.inner.get_chunks(chunk_ids)

    def neighbour(self, chunk: Chunk, offset: int) -> Chunk | None:
        self.calls.append(("neighbour", (chunk.chunk_id, offset)))
        return self.inner.neighbour(chunk, offset)

    def child_count(self) -> int:
        return self.inner.child_count()
