"""Dense pseudo-relevance feedback (Rocchio): move the query vector towards its top hits.

``q' = normalise(q + weight * mean(top hits' vectors))``, then the knowledge base is searched
again with ``q'``. It costs one matrix-vector product per feedback pass when the knowledge base
can hand out stored vectors, and a few document embeddings when it cannot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragchat.embed.base import Matrix, Vector
from ragchat.types import Chunk
from ragchat.vectorstores.base import KeepsVectors, SearchableKB


def feedback_vectors(kb: SearchableKB, chunks: Sequence[Chunk]) -> Matrix:
    """Vectors of the feedback chunks: stored ones when available, else freshly embedded."""
    if isinstance(kb, KeepsVectors):
        stored = kb.stored_vectors([c.chunk_id for c in chunks])
        if stored is not None:
            return stored
    return np.asarray(kb.embedder.embed_documents([c.text for c in chunks]), dtype=np.float32)


def rocchio(query_vec: Vector, doc_vecs: Matrix, weight: float) -> Vector:
    """``normalise(q + weight * mean(doc_vecs))``; ``q`` unchanged without feedback."""
    if weight < 0:
        raise ValueError(f"weight must be >= 0, got {weight}")
    if len(doc_vecs) == 0 or weight == 0:
        return query_vec
    moved = np.asarray(query_vec, dtype=np.float32) + weight * np.asarray(
        doc_vecs, dtype=np.float32
    ).mean(axis=0)
    norm = float(np.linalg.norm(moved))
    if norm == 0.0:
        return query_vec
    return (moved / norm).astype(np.float32)
