"""The micro-batcher: concurrent callers share model calls and each gets its own vectors."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.embed.batching import MicroBatchingEmbedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import RagchatError


class SlowEmbedder(HashingEmbedder):
    """Each model call takes a while, as a real one does, so callers pile up behind it; it
    checks it is never entered twice at once (one model, one call at a time)."""

    def __init__(self, delay: float = 0.02, *, fail_on: str = "") -> None:
        super().__init__()
        self.delay = delay
        self.fail_on = fail_on
        self.batches: list[list[str]] = []
        self._busy = threading.Lock()

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        if not self._busy.acquire(blocking=False):
            raise AssertionError("the model was called concurrently")
        try:
            time.sleep(self.delay)
            self.batches.append(list(texts))
            if self.fail_on and self.fail_on in texts:
                raise RagchatError("model failed")
            return super().embed_documents(texts, progress=progress)
        finally:
            self._busy.release()


def _concurrently(batcher: Embedder, jobs: list[list[str]]) -> list[Matrix]:
    start = threading.Barrier(len(jobs))

    def one(texts: list[str]) -> Matrix:
        start.wait()
        if len(texts) == 1 and texts[0].startswith("q:"):
            return batcher.embed_query(texts[0])[None, :]
        return batcher.embed_documents(texts)

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(one, jobs))


def test_each_caller_gets_its_own_vectors_and_calls_are_batched() -> None:
    inner = SlowEmbedder()
    batcher = MicroBatchingEmbedder(inner, max_wait_ms=20)
    jobs = [
        [f"q: question {i}"] if i % 2 else [f"sentence {i} a", f"sentence {i} b"] for i in range(16)
    ]
    results = _concurrently(batcher, jobs)
    reference = HashingEmbedder()
    for texts, got in zip(jobs, results, strict=True):
        np.testing.assert_allclose(got, reference.embed_documents(texts), rtol=0, atol=1e-7)
    assert len(inner.batches) < len(jobs)  # callers shared model calls
    assert batcher.model_calls == len(inner.batches)
    assert sum(len(b) for b in inner.batches) == sum(len(j) for j in jobs)


def test_identical_texts_in_one_batch_are_embedded_once() -> None:
    inner = SlowEmbedder()
    batcher = MicroBatchingEmbedder(inner, max_wait_ms=20)
    results = _concurrently(batcher, [["same question"]] * 6)
    assert all(np.array_equal(r, results[0]) for r in results)
    assert inner.embedded["same question"] < 6


def test_a_lone_caller_is_served_alone() -> None:
    inner = SlowEmbedder(delay=0)
    batcher = MicroBatchingEmbedder(inner)
    vec = batcher.embed_query("how much sleep")
    np.testing.assert_array_equal(vec, HashingEmbedder().embed_query("how much sleep"))
    assert inner.batches == [["how much sleep"]]


def test_errors_reach_every_caller_of_the_batch_and_the_batcher_keeps_working() -> None:
    inner = SlowEmbedder(fail_on="bad")
    batcher = MicroBatchingEmbedder(inner, max_wait_ms=30)
    jobs = [["bad"], *([f"good {i}"] for i in range(5))]
    start = threading.Barrier(len(jobs))

    def one(texts: list[str]) -> str:
        start.wait()
        try:
            batcher.embed_documents(texts)
        except RagchatError as exc:
            return str(exc)
        return "ok"

    with ThreadPoolExecutor(len(jobs)) as pool:
        outcomes = list(pool.map(one, jobs))
    assert outcomes[0] == "model failed"
    failed = {t for b in inner.batches if "bad" in b for t in b}
    for texts, outcome in zip(jobs, outcomes, strict=True):  # exactly the bad batch failed
        assert (outcome == "model failed") == (texts[0] in failed)
    assert batcher.embed_documents(["after"]).shape == (1, inner.dim)


def test_large_calls_bypass_the_batcher() -> None:
    inner = SlowEmbedder(delay=0)
    batcher = MicroBatchingEmbedder(inner, max_batch=4)
    texts = [f"chunk {i}" for i in range(10)]
    np.testing.assert_array_equal(
        batcher.embed_documents(texts), HashingEmbedder().embed_documents(texts)
    )
    assert batcher.model_calls == 0 and inner.batches == [texts]


class AsymmetricSlow(SlowEmbedder):
    symmetric = False

    def embed_query(self, text: str) -> Vector:
        return super().embed_documents(["query: " + text])[0]


def test_asymmetric_queries_are_embedded_as_queries() -> None:
    inner = AsymmetricSlow(delay=0.01)
    batcher = MicroBatchingEmbedder(inner, max_wait_ms=20)
    results = _concurrently(batcher, [["q: a"], ["q: b"], ["doc c", "doc d"]])
    reference = HashingEmbedder()
    np.testing.assert_allclose(results[0][0], reference.embed_query("query: q: a"), atol=1e-7)
    np.testing.assert_allclose(results[2], reference.embed_documents(["doc c", "doc d"]), atol=1e-7)


@pytest.mark.parametrize("empty", [[], ()])
def test_empty_call(empty: Sequence[str]) -> None:
    assert MicroBatchingEmbedder(HashingEmbedder()).embed_documents(empty).shape == (0, 256)
