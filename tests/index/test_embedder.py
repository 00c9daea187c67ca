from pathlib import Path

import numpy as np
import pytest

from ragchat.errors import ModelLoadError
from ragchat.index.embedder import (
    SentenceTransformerEmbedder,
    load_embedder,
    resolve_model_path,
)
from ragchat.settings import EmbeddingSettings, Settings


def test_default_name_resolves_to_packaged_weights() -> None:
    path = Path(resolve_model_path("sentence-transformers/all-MiniLM-L6-v2"))
    assert (path / "model.safetensors").is_file()
    assert resolve_model_path("some-org/other-model") == "some-org/other-model"


def test_real_model_gives_normalised_vectors_in_input_order() -> None:
    emb = load_embedder(Settings())
    assert emb.dim == 384
    texts = ["a much longer sentence about liver damage and acetaminophen overdose", "dose", "x y"]
    vectors = emb.embed_documents(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Length-sorted batching must not reorder the output.
    for text, vec in zip(texts, vectors, strict=True):
        assert float(emb.embed_query(text) @ vec) == pytest.approx(1.0, abs=1e-4)
    related = float(emb.embed_query("paracetamol liver toxicity") @ vectors[0])
    unrelated = float(emb.embed_query("football world cup final") @ vectors[0])
    assert related > unrelated + 0.2


def test_loaded_once_per_process() -> None:
    assert load_embedder(Settings()) is load_embedder(Settings())


def test_unknown_model_fails_fast_and_clearly_offline() -> None:
    with pytest.raises(ModelLoadError, match="downloads are off"):
        SentenceTransformerEmbedder(EmbeddingSettings(model="no-such-org/no-such-model"))
