"""BM25 as sparse vectors, for stores that score sparse vectors themselves (Qdrant).

A document's value for a term is the BM25 term-frequency part ``tf / (tf + k1 * (1 - b + b *
dl / avgdl))``; the store multiplies it by the term's IDF (Qdrant's ``Modifier.IDF``:
``ln(1 + (N - df + 0.5) / (df + 0.5))``, the formula of ``bm25.BM25Index``) and the query's
term counts. With the same ``avgdl`` the scores equal the embedded index's exactly.

Terms are the embedded index's tokens (``bm25.tokenize``: stopwords and Snowball stems), mapped
to 32-bit ids by a hash rather than a vocabulary, so writers on several machines need no shared
state (a collision merges two terms: about one pair in 100k terms).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragchat.vectorstores.bm25 import tokenize


def term_id(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little")


@dataclass(frozen=True)
class SparseVec:
    indices: list[int]
    values: list[float]


def _counts(tokens: Sequence[str]) -> dict[int, int]:
    counts: Counter[int] = Counter(term_id(t) for t in tokens)
    return dict(sorted(counts.items()))


def document_lengths(texts: Sequence[str]) -> list[int]:
    return [len(tokens) for tokens in tokenize(texts)]


def document_vectors(
    texts: Sequence[str], avgdl: float, k1: float = 1.2, b: float = 0.75
) -> list[SparseVec]:
    out = []
    for tokens in tokenize(texts):
        norm = k1 * (1.0 - b + b * len(tokens) / max(avgdl, 1e-9))
        counts = _counts(tokens)
        out.append(SparseVec(list(counts), [tf / (tf + norm) for tf in counts.values()]))
    return out


def query_vector(query: str) -> SparseVec:
    """Term counts: a repeated query term counts repeatedly, as in the embedded index."""
    counts = _counts(tokenize([query])[0])
    return SparseVec(list(counts), [float(c) for c in counts.values()])
