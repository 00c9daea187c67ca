from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer

from ragchat.errors import IndexStateError
from ragchat.vectorstores.base import KeywordIndex
from ragchat.vectorstores.bm25 import BM25Index, tokenize

CORPUS = [
    "The cat sat on the mat.",
    "Dogs and cats are popular pets.",
    "A quick brown fox jumps over the lazy dog.",
    "Cats, cats and more cats: a feline story.",
    "Ibuprofen is a non-steroidal anti-inflammatory drug.",
]


def _reference(corpus: list[str], query: str) -> np.ndarray:
    ref = bm25s.BM25(k1=1.2, b=0.75)
    ref.index(
        bm25s.tokenize(
            corpus, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
        ),
        show_progress=False,
    )
    return np.asarray(ref.get_scores(tokenize([query])[0]))


@pytest.mark.parametrize(
    "query", ["cat", "cats and dogs pets", "anti-inflammatory drugs", "fox fox"]
)
def test_scores_equal_bm25s_lucene(query: str) -> None:
    index = BM25Index()
    index.add(np.arange(len(CORPUS)), CORPUS)
    np.testing.assert_allclose(index.all_scores(query), _reference(CORPUS, query), rtol=1e-5)


def test_append_equals_building_at_once() -> None:
    whole = BM25Index()
    whole.add(np.arange(5), CORPUS)
    parts = BM25Index()
    parts.add(np.arange(2), CORPUS[:2])
    parts.add(np.arange(2, 5), CORPUS[2:])
    np.testing.assert_allclose(parts.all_scores("cat pets"), whole.all_scores("cat pets"))


def test_remove_drops_documents_and_updates_statistics() -> None:
    index = BM25Index()
    index.add(np.arange(5), CORPUS)
    index.remove(np.asarray([3]))
    remaining = [c for i, c in enumerate(CORPUS) if i != 3]
    assert len(index) == 4
    np.testing.assert_allclose(index.all_scores("cat"), _reference(remaining, "cat"), rtol=1e-5)
    assert 3 not in index.search("cat", 10)[1]


def test_search_orders_by_score_and_respects_allowed() -> None:
    index = BM25Index()
    index.add(np.arange(10, 15), CORPUS)
    scores, labels = index.search("cats", 3)
    assert list(labels[:1]) == [13]
    assert all(scores[i] >= scores[i + 1] for i in range(len(scores) - 1))
    _, only = index.search("cats", 3, allowed=np.asarray([11, 14]))
    assert list(only) == [11]


def test_unknown_terms_give_no_hits() -> None:
    index = BM25Index()
    index.add(np.arange(5), CORPUS)
    assert len(index.search("zzzqqq", 5)[1]) == 0
    assert index.scores("zzzqqq", np.asarray([0, 1])).tolist() == [0.0, 0.0]


def test_round_trip(tmp_path: Path) -> None:
    index = BM25Index()
    index.add(np.arange(5), CORPUS)
    index.save(tmp_path)
    again = BM25Index.load(tmp_path)
    np.testing.assert_allclose(again.all_scores("cat dog"), index.all_scores("cat dog"))
    assert again.labels.tolist() == index.labels.tolist()


def test_corrupt_files_give_a_clear_error(tmp_path: Path) -> None:
    index = BM25Index()
    index.add(np.arange(5), CORPUS)
    index.save(tmp_path)
    (tmp_path / "bm25_tf.npz").write_bytes(b"not a zip")
    with pytest.raises(IndexStateError, match="corrupt"):
        BM25Index.load(tmp_path)


def test_is_the_keyword_index_the_knowledge_base_uses() -> None:
    index = BM25Index()
    assert isinstance(index, KeywordIndex)
    index.add(np.arange(10, 10 + len(CORPUS)), CORPUS)
    _, labels = index.search("cats", 2, allowed=np.asarray([10, 11, 12]))
    assert set(labels.tolist()) <= {10, 11, 12} and len(index) == len(CORPUS)
    assert index.scores("cats", np.asarray([13, 999]))[1] == 0.0
