"""Chunk-level gold: qrels whose corpus ids are ``chunk:<chunk id>`` (what ``ragchat eval
synth`` writes) judge the exact child chunk a question was written from, in a knowledge base
of any kind (Markdown, PDF, transcripts or JSONL)."""

from __future__ import annotations

from ragchat.eval.data import Qrels
from ragchat.types import Chunk

CHUNK_PREFIX = "chunk:"


class ChunkUnits:
    """A retrieved chunk's unit is its own chunk id."""

    def units(self, chunk: Chunk) -> list[str]:
        return [CHUNK_PREFIX + chunk.chunk_id]


def is_chunk_qrels(qrels: Qrels) -> bool:
    """Whether every judged id is a ``chunk:`` id."""
    ids = [doc for rels in qrels.values() for doc in rels]
    return bool(ids) and all(doc.startswith(CHUNK_PREFIX) for doc in ids)
