"""The embedding contract: texts to L2-normalised float32 vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
Rows = npt.NDArray[np.int64]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, so inner product = cosine similarity.

    An embedder may also set ``symmetric = True`` when ``embed_query(t)`` equals
    ``embed_documents([t])[0]`` (no query prompt): the caches and the micro-batcher
    (``cache.py``, ``batching.py``) then share vectors and batches between the two."""

    model_name: str
    dim: int

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...
