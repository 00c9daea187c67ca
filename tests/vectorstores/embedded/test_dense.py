"""Contract tests every dense backend passes: numpy and FAISS flat scans, hnswlib HNSW."""

from pathlib import Path

import numpy as np
import pytest

from ragchat.errors import IndexStateError
from ragchat.vectorstores.base import DenseIndex
from ragchat.vectorstores.embedded.dense import (
    FlatIndex,
    HNSWIndex,
    load_dense_index,
    new_dense_index,
)


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class DenseContract:
    """What knowledge bases rely on from any dense index."""

    exact = True

    def make(self, dim: int) -> FlatIndex:
        raise NotImplementedError

    def load(self, directory: Path, dim: int) -> FlatIndex:
        raise NotImplementedError

    def test_search_finds_exact_neighbours(self) -> None:
        vecs = _vectors(300)
        index = self.make(16)
        index.add(np.arange(100, 400), vecs)
        query = vecs[42]
        scores, labels = index.search(query, 5)
        exact = np.argsort(-(vecs @ query))[:5] + 100
        assert labels[0] == 142
        assert pytest.approx(float(scores[0]), abs=1e-5) == 1.0
        assert set(labels.tolist()) == set(exact.tolist())
        np.testing.assert_allclose(scores, (vecs @ query)[labels - 100], atol=1e-5)
        assert list(scores) == sorted(scores, reverse=True)

    def test_k_beyond_size_and_empty_index(self) -> None:
        index = self.make(16)
        assert len(index.search(_vectors(1)[0], 3)[1]) == 0
        index.add(np.arange(2), _vectors(2))
        assert sorted(index.search(_vectors(1, seed=5)[0], 10)[1].tolist()) == [0, 1]

    def test_ties_break_by_label(self) -> None:
        if not self.exact:
            pytest.skip("an approximate index does not promise an order among equal scores")
        index = self.make(16)
        same = np.repeat(_vectors(1), 30, axis=0)
        index.add(np.arange(30)[::-1].copy(), same)
        assert index.search(same[0], 5)[1].tolist() == [0, 1, 2, 3, 4]

    def test_allowed_restricts_and_scores_are_exact(self) -> None:
        vecs = _vectors(50)
        index = self.make(16)
        index.add(np.arange(50), vecs)
        _, labels = index.search(vecs[0], 3, allowed=np.asarray([5, 6, 7]))
        assert set(labels.tolist()) <= {5, 6, 7}
        got = index.scores(vecs[0], np.asarray([5, 999]))
        assert got[0] == pytest.approx(float(vecs[5] @ vecs[0]), abs=1e-6)
        assert got[1] == 0.0

    def test_remove_and_round_trip(self, tmp_path: Path) -> None:
        vecs = _vectors(60)
        index = self.make(16)
        index.add(np.arange(60), vecs)
        index.remove(np.asarray([7]))
        assert len(index) == 59
        assert 7 not in index.search(vecs[7], 5)[1].tolist()
        index.add(np.asarray([60]), vecs[7:8])
        assert index.search(vecs[7], 1)[1].tolist() == [60]
        index.save(tmp_path)
        again = self.load(tmp_path, 16)
        assert len(again) == 60
        assert again.search(vecs[3], 1)[1].tolist() == [3]

    def test_is_a_dense_index_that_keeps_its_vectors(self) -> None:
        vecs = _vectors(20)
        index = self.make(16)
        assert isinstance(index, DenseIndex)
        index.add(np.arange(10, 30), vecs)
        stored = index.vector(12)
        assert stored is not None and np.allclose(stored, vecs[2])
        assert index.vector(99) is None
        index.remove(np.asarray([12]))
        assert index.vector(12) is None and len(index) == 19


class TestNumpyFlat(DenseContract):
    def make(self, dim: int) -> FlatIndex:
        return FlatIndex(dim, kernel="numpy")

    def load(self, directory: Path, dim: int) -> FlatIndex:
        return FlatIndex.load(directory, dim, kernel="numpy")


class TestFaissFlat(DenseContract):
    def make(self, dim: int) -> FlatIndex:
        pytest.importorskip("faiss")
        return FlatIndex(dim, kernel="faiss")

    def load(self, directory: Path, dim: int) -> FlatIndex:
        return FlatIndex.load(directory, dim, kernel="faiss")


class TestHNSW(DenseContract):
    exact = False

    def make(self, dim: int) -> FlatIndex:
        return new_dense_index("hnsw", dim)

    def load(self, directory: Path, dim: int) -> FlatIndex:
        return load_dense_index("hnsw", directory, dim)


def test_faiss_and_numpy_kernels_agree_and_share_the_format(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    vecs = _vectors(2000, dim=32, seed=4)
    written = FlatIndex(32, kernel="numpy")
    written.add(np.arange(2000), vecs)
    written.save(tmp_path)  # as a knowledge base written before the FAISS kernel existed
    read = FlatIndex.load(tmp_path, 32)
    assert read.kernel == "faiss"
    for q in _vectors(20, dim=32, seed=9):
        s1, l1 = written.search(q, 10)
        s2, l2 = read.search(q, 10)
        assert l1.tolist() == l2.tolist()
        np.testing.assert_allclose(s1, s2, atol=1e-5)


def test_wrong_dim_is_rejected(tmp_path: Path) -> None:
    index = FlatIndex(16)
    with pytest.raises(IndexStateError, match="dim 16"):
        index.add(np.arange(2), _vectors(2, dim=8))
    index.add(np.arange(2), _vectors(2))
    index.save(tmp_path)
    with pytest.raises(IndexStateError, match="dim 32"):
        FlatIndex.load(tmp_path, 32)


def test_hnsw_grows_past_its_initial_capacity() -> None:
    vecs = _vectors(1500, seed=3)
    index = HNSWIndex(16)
    index.add(np.arange(1500), vecs)
    assert index.search(vecs[1499], 1)[1].tolist() == [1499]
