"""A tiny deterministic embedder for tests and demos without torch: hashed word and character
trigram counts. Similar texts get similar vectors, which is all the tests need."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragchat.embed.base import Matrix, Vector

_WORD = re.compile(r"\w+", re.UNICODE)


def _bucket(token: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little") % dim


class HashingEmbedder:
    symmetric = True  # embed_query(t) == embed_documents([t])[0]

    def __init__(self, dim: int = 256, model_name: str = "fake-hashing") -> None:
        self.dim = dim
        self.model_name = model_name
        self.calls = 0  # model calls
        self.embedded: Counter[str] = Counter()  # how often each text was embedded

    def _one(self, text: str) -> Vector:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            vec[_bucket("w:" + word, self.dim)] += 1.0
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                vec[_bucket("c:" + padded[i : i + 3], self.dim)] += 0.25
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        self.calls += 1
        self.embedded.update(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> Vector:
        self.calls += 1
        self.embedded[text] += 1
        return self._one(text)


class ProcessMarkingEmbedder(HashingEmbedder):
    """The hashing fake for tests of ingestion in a child process (``ingestion/worker.py``): each
    process that embeds documents leaves an empty file ``pid-<pid>`` in ``marks``. In a process
    other than its creator's: while ``marks/die`` exists, it kills that process (SIGKILL)
    instead, as an out-of-memory kill or a parser's crash would; while ``marks/hold`` exists
    and one of the texts contains the word written in it, it waits (a big job in progress).
    Shipped here so a child process can unpickle it."""

    def __init__(self, marks: Path) -> None:
        super().__init__()
        self.marks = Path(marks)
        self.creator = os.getpid()

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        (self.marks / f"pid-{os.getpid()}").touch()
        if os.getpid() != self.creator:
            if (self.marks / "die").exists():
                os.kill(os.getpid(), signal.SIGKILL)
            while self._held(texts):
                time.sleep(0.05)
        return super().embed_documents(texts, progress=progress)

    def _held(self, texts: Sequence[str]) -> bool:
        try:
            word = (self.marks / "hold").read_text().strip()
        except FileNotFoundError:
            return False
        return any(word in t for t in texts)
