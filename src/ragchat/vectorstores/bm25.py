"""BM25 over child chunks, scored with a scipy sparse matrix.

Tokenisation is bm25s's (English stopwords + PyStemmer) and the scoring is bm25s's "lucene"
variant, so scores equal ``bm25s.BM25(k1, b)`` exactly (tests check it). We keep our own
scorer rather than bm25s's index because (measured, docs/benchmarks.md): it appends and removes
documents without re-tokenising the collection (we keep raw term counts and only re-derive the
weights), it needs no numba JIT (bm25s's numba backend costs seconds of compile on the first
query of every CLI process), and at 0.6 ms per query at 100k docs it is far below the ~10 ms a
query embedding costs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import Stemmer

from ragchat.embed.base import Rows
from ragchat.errors import IndexStateError

_STEMMER = Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    out = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return out


class BM25Index:
    """Raw term counts (CSR, one row per label) are the persisted truth; the BM25 weight matrix
    (CSC, for fast per-term column sums) is derived lazily after every change."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.vocab: dict[str, int] = {}
        self.labels: Rows = np.zeros(0, dtype=np.int64)
        self.tf: sp.csr_matrix = sp.csr_matrix((0, 0), dtype=np.float32)
        self._weights: sp.csc_matrix | None = None
        self._row_of: dict[int, int] = {}

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    # -- writing -------------------------------------------------------------------------
    def add(self, labels: Rows, texts: Sequence[str]) -> None:
        if len(labels) != len(texts):
            raise ValueError("labels and texts differ in length")
        if len(texts) == 0:
            return
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        for tokens in tokenize(texts):
            counts: dict[int, int] = {}
            for tok in tokens:
                col = self.vocab.setdefault(tok, len(self.vocab))
                counts[col] = counts.get(col, 0) + 1
            for col in sorted(counts):
                indices.append(col)
                data.append(float(counts[col]))
            indptr.append(len(indices))
        vocab_size = len(self.vocab)
        new = sp.csr_matrix(
            (np.asarray(data, dtype=np.float32), np.asarray(indices), np.asarray(indptr)),
            shape=(len(texts), vocab_size),
        )
        old = self.tf
        old.resize((old.shape[0], vocab_size))
        self.tf = sp.vstack([old, new], format="csr")
        self.labels = np.concatenate([self.labels, np.asarray(labels, dtype=np.int64)])
        self._changed()

    def remove(self, labels: Rows) -> None:
        drop = np.isin(self.labels, np.asarray(labels, dtype=np.int64))
        if not drop.any():
            return
        keep = np.flatnonzero(~drop)
        self.tf = self.tf[keep]
        self.labels = self.labels[keep]
        self._changed()

    def _changed(self) -> None:
        self._weights = None
        self._row_of = {int(lab): i for i, lab in enumerate(self.labels)}

    # -- scoring -------------------------------------------------------------------------
    def _weight_matrix(self) -> sp.csc_matrix:
        if self._weights is None:
            tf = self.tf.tocoo()
            n_docs = self.tf.shape[0]
            doc_len = np.asarray(self.tf.sum(axis=1)).ravel()
            avgdl = float(doc_len.mean()) if n_docs else 1.0
            df = np.bincount(tf.col, minlength=self.tf.shape[1]).astype(np.float64)
            idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * doc_len / max(avgdl, 1e-9))
            weights = idf[tf.col] * tf.data / (tf.data + norm[tf.row])
            self._weights = sp.csc_matrix(
                (weights.astype(np.float32), (tf.row, tf.col)), shape=self.tf.shape
            )
        return self._weights

    def _query_columns(self, query: str) -> list[int]:
        # Repeated query terms count repeatedly, as in bm25s.
        return [self.vocab[t] for t in tokenize([query])[0] if t in self.vocab]

    def all_scores(self, query: str) -> npt.NDArray[np.float32]:
        cols = self._query_columns(query)
        if not cols or len(self) == 0:
            return np.zeros(len(self), dtype=np.float32)
        w = self._weight_matrix()
        unique, counts = np.unique(cols, return_counts=True)
        sub = w[:, unique]
        return np.asarray(sub @ counts.astype(np.float32)).ravel().astype(np.float32)

    def search(
        self, query: str, k: int, allowed: Rows | None = None
    ) -> tuple[npt.NDArray[np.float32], Rows]:
        scores = self.all_scores(query)
        if allowed is not None:
            mask = np.isin(self.labels, allowed)
            scores = np.where(mask, scores, 0.0).astype(np.float32)
        return top_k(scores, self.labels, k, positive_only=True)

    def scores(self, query: str, labels: Rows) -> npt.NDArray[np.float32]:
        all_scores = self.all_scores(query)
        rows = [self._row_of.get(int(lab), -1) for lab in labels]
        return np.asarray([all_scores[r] if r >= 0 else 0.0 for r in rows], dtype=np.float32)

    # -- persistence ---------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        sp.save_npz(directory / "bm25_tf.tmp.npz", self.tf)
        np.save(directory / "bm25_labels.tmp.npy", self.labels)
        (directory / "bm25_vocab.tmp.json").write_text(
            json.dumps({"k1": self.k1, "b": self.b, "vocab": self.vocab})
        )
        for name in ("bm25_tf.npz", "bm25_labels.npy", "bm25_vocab.json"):
            stem, ext = name.split(".", 1)
            (directory / f"{stem}.tmp.{ext}").replace(directory / name)

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        try:
            meta = json.loads((directory / "bm25_vocab.json").read_text())
            tf = sp.load_npz(directory / "bm25_tf.npz").tocsr()
            labels = np.load(directory / "bm25_labels.npy")
        except (OSError, ValueError, KeyError) as exc:
            raise IndexStateError(
                f"BM25 index in {directory} is missing or corrupt: {exc}"
            ) from exc
        index = cls(k1=float(meta["k1"]), b=float(meta["b"]))
        index.vocab = {str(k): int(v) for k, v in meta["vocab"].items()}
        index.tf = tf.astype(np.float32)
        index.labels = labels.astype(np.int64)
        if index.tf.shape[0] != len(index.labels):
            raise IndexStateError(
                f"BM25 index in {directory}: {len(index.labels)} labels for "
                f"{index.tf.shape[0]} rows"
            )
        index._changed()
        return index


def top_k(
    scores: npt.NDArray[np.float32], labels: Rows, k: int, *, positive_only: bool = False
) -> tuple[npt.NDArray[np.float32], Rows]:
    """Best k (scores, labels); ties broken by label so results are deterministic."""
    keep = np.flatnonzero(scores > 0 if positive_only else np.isfinite(scores))
    if keep.size == 0 or k <= 0:
        return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
    cand = keep
    if keep.size > k:
        part = np.argpartition(-scores[keep], k - 1)[:k]
        # Include every candidate tied with the k-th score so tie-breaking is by label.
        kth = scores[keep][part].min()
        cand = keep[scores[keep] >= kth]
    order = np.lexsort((labels[cand], -scores[cand]))[:k]
    chosen = cand[order]
    return scores[chosen].astype(np.float32), labels[chosen].astype(np.int64)
