"""Contract tests every dense backend passes."""

from pathlib import Path

import numpy as np
import pytest

from ragchat.errors import IndexStateError
from ragchat.index.base import DenseIndex
from ragchat.index.dense import FlatIndex, HNSWIndex, load_dense_index, new_dense_index

BACKENDS = ["flat", "hnsw"]


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("kind", BACKENDS)
def test_search_finds_exact_neighbours(kind: str) -> None:
    vecs = _vectors(300)
    index = new_dense_index(kind, 16)
    index.add(np.arange(100, 400), vecs)
    query = vecs[42]
    scores, labels = index.search(query, 5)
    exact = np.argsort(-(vecs @ query))[:5] + 100
    assert labels[0] == 142
    assert pytest.approx(float(scores[0]), abs=1e-5) == 1.0
    assert set(labels.tolist()) == set(exact.tolist())


@pytest.mark.parametrize("kind", BACKENDS)
def test_allowed_restricts_and_scores_are_exact(kind: str) -> None:
    vecs = _vectors(50)
    index = new_dense_index(kind, 16)
    index.add(np.arange(50), vecs)
    _, labels = index.search(vecs[0], 3, allowed=np.asarray([5, 6, 7]))
    assert set(labels.tolist()) <= {5, 6, 7}
    got = index.scores(vecs[0], np.asarray([5, 999]))
    assert got[0] == pytest.approx(float(vecs[5] @ vecs[0]), abs=1e-6)
    assert got[1] == 0.0


@pytest.mark.parametrize("kind", BACKENDS)
def test_remove_and_round_trip(kind: str, tmp_path: Path) -> None:
    vecs = _vectors(60)
    index = new_dense_index(kind, 16)
    index.add(np.arange(60), vecs)
    index.remove(np.asarray([7]))
    assert len(index) == 59
    assert 7 not in index.search(vecs[7], 5)[1].tolist()
    index.save(tmp_path)
    again = load_dense_index(kind, tmp_path, 16)
    assert len(again) == 59
    assert again.search(vecs[3], 1)[1].tolist() == [3]


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


@pytest.mark.parametrize("kind", BACKENDS)
def test_every_backend_is_a_dense_index_that_keeps_its_vectors(kind: str) -> None:
    vecs = _vectors(20)
    index = new_dense_index(kind, 16)
    assert isinstance(index, DenseIndex)
    index.add(np.arange(10, 30), vecs)
    stored = index.vector(12)
    assert stored is not None and np.allclose(stored, vecs[2])
    assert index.vector(99) is None
    index.remove(np.asarray([12]))
    assert index.vector(12) is None and len(index) == 19
