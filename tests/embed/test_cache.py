"""The vector caches of the fast answer path: same vectors as embedding directly, one model
call per new text, keys that follow the sentence text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragchat.embed.base import Matrix, Vector
from ragchat.embed.batching import MicroBatchingEmbedder
from ragchat.embed.cache import CachedEmbedder, embed_sentences, fast_embedder
from ragchat.embed.fake import HashingEmbedder

SENTENCES = [
    "Ibuprofen can upset the stomach.",
    "Take it with food to avoid this.",
    "Adults can take up to 1200 mg a day.",
]


class Asymmetric(HashingEmbedder):
    """Queries get a prefix, as e5-style models do: query and document vectors differ."""

    symmetric = False

    def embed_query(self, text: str) -> Vector:
        self.calls += 1
        self.embedded["query: " + text] += 1
        return self._one("query: " + text)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        return super().embed_documents(texts, progress=progress)


def test_sentence_vectors_equal_direct_embedding_and_are_computed_once() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner)
    owners = ["c1", "c1", "c2"]
    first = cached.embed_owned(owners, SENTENCES)
    np.testing.assert_array_equal(first, HashingEmbedder().embed_documents(SENTENCES))
    calls = inner.calls
    again = cached.embed_owned(owners, SENTENCES)
    np.testing.assert_array_equal(again, first)
    assert inner.calls == calls  # every sentence came from the cache


def test_changed_sentence_text_is_embedded_anew() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner)
    cached.embed_owned(["c1", "c1"], SENTENCES[:2])
    # The same chunk split differently: the second sentence now carries the third's text.
    changed = [SENTENCES[0], SENTENCES[1] + " " + SENTENCES[2]]
    vecs = cached.embed_owned(["c1", "c1"], changed)
    np.testing.assert_array_equal(vecs, HashingEmbedder().embed_documents(changed))
    assert inner.embedded[changed[1]] == 1 and inner.embedded[changed[0]] == 1


def test_a_text_shared_by_two_chunks_is_embedded_once_per_call() -> None:
    inner = HashingEmbedder()
    vecs = CachedEmbedder(inner).embed_owned(["a", "b"], [SENTENCES[0], SENTENCES[0]])
    np.testing.assert_array_equal(vecs[0], vecs[1])
    assert inner.embedded[SENTENCES[0]] == 1


def test_sentence_cache_is_bounded() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner, sentences=2)
    cached.embed_owned(["c"] * 3, SENTENCES)
    cached.embed_owned(["c"], SENTENCES[:1])  # the oldest entry was evicted
    assert inner.embedded[SENTENCES[0]] == 2
    cached.embed_owned(["c"], SENTENCES[2:])  # the newest one was kept
    assert inner.embedded[SENTENCES[2]] == 1


def test_query_memo_serves_every_caller_of_a_symmetric_embedder() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner)
    message = "What are the side effects of ibuprofen?"
    doc = cached.embed_documents([message])[0]  # the safety check embeds it as a document
    for _ in range(3):  # routing, retrieval, composition
        np.testing.assert_array_equal(cached.embed_query(message), doc)
    assert inner.embedded[message] == 1
    np.testing.assert_array_equal(doc, HashingEmbedder().embed_query(message))


def test_asymmetric_embedder_keeps_queries_and_documents_apart() -> None:
    inner = Asymmetric()
    cached = CachedEmbedder(inner)
    doc = cached.embed_documents(["sleep"])[0]
    query = cached.embed_query("sleep")
    assert not np.allclose(doc, query)
    np.testing.assert_array_equal(query, Asymmetric().embed_query("sleep"))
    cached.embed_query("sleep")
    assert inner.embedded["query: sleep"] == 1


def test_returned_vectors_do_not_alias_the_cache() -> None:
    cached = CachedEmbedder(HashingEmbedder())
    vec = cached.embed_query("sleep")
    vec[:] = 0
    assert float(np.linalg.norm(cached.embed_query("sleep"))) > 0.99


def test_large_calls_pass_through_uncached() -> None:
    inner = HashingEmbedder()
    cached = CachedEmbedder(inner)
    texts = [f"passage {i}" for i in range(20)]
    cached.embed_documents(texts)
    cached.embed_documents(texts)
    assert inner.embedded["passage 3"] == 2


def test_embed_sentences_without_a_cache_embeds_directly() -> None:
    inner = HashingEmbedder()
    vecs = embed_sentences(inner, ["c1"] * 3, SENTENCES)
    np.testing.assert_array_equal(vecs, HashingEmbedder().embed_documents(SENTENCES))
    assert inner.calls == 1


def test_fast_embedder_wraps_once() -> None:
    fast = fast_embedder(HashingEmbedder())
    assert isinstance(fast, CachedEmbedder)
    assert isinstance(fast.inner, MicroBatchingEmbedder)
    assert fast_embedder(fast) is fast
    assert isinstance(fast_embedder(HashingEmbedder(), max_batch=1).inner, HashingEmbedder)  # type: ignore[attr-defined]


def test_sentence_vectors_survive_a_restart(tmp_path: Path) -> None:
    first = CachedEmbedder(HashingEmbedder())
    vecs = first.embed_owned(["c1"] * 3, SENTENCES)
    path = tmp_path / "cache" / "sentences.npz"
    assert first.save_sentences(path) == 3

    inner = HashingEmbedder()
    restarted = CachedEmbedder(inner)
    assert restarted.load_sentences(path) == 3
    # Found by content, whichever chunk now holds the sentence.
    np.testing.assert_array_equal(restarted.embed_owned(["other"] * 3, SENTENCES), vecs)
    assert inner.calls == 0


def test_saved_vectors_of_another_model_or_a_broken_file_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "sentences.npz"
    other = CachedEmbedder(HashingEmbedder(model_name="other"))
    other.embed_owned(["c"], SENTENCES[:1])
    other.save_sentences(path)
    assert CachedEmbedder(HashingEmbedder()).load_sentences(path) == 0
    path.write_bytes(b"not a numpy file")
    assert CachedEmbedder(HashingEmbedder()).load_sentences(path) == 0
    assert CachedEmbedder(HashingEmbedder()).load_sentences(tmp_path / "missing.npz") == 0
