"""The embedding model run by onnxruntime (fp32 or int8), exported from the torch model on
first use (``onnx_export``). Same model, same name: vectors agree with the torch backend
(cosine ≥ 0.9999 in fp32, ~0.995 in int8; docs/benchmarks.md), so a knowledge base keeps its
``embedding_model`` and opens with any of the three backends.

Texts are tokenised once, sorted by token count and cut into batches padded only to their
own longest member (``_TOKEN_BUDGET``), and put back in input order. With int8, activations
are quantized per call, so int8 runs one text per call: a text's vector then never depends on
its batch mates. fp32 results do not depend on batching. Loading needs neither torch nor
sentence-transformers once the export is cached, so start-up is quicker too.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragchat.embed.base import Matrix, Vector
from ragchat.embed.onnx_export import FP32_FILE, INT8_FILE, ensure_export, read_meta
from ragchat.errors import ModelLoadError
from ragchat.settings import EmbeddingSettings, Settings

log = logging.getLogger(__name__)

# Padded tokens per onnxruntime call. On 2 cores, one 256-token abstract per call embedded
# as fast as 4 and faster than 32 (13.4 vs 16.0 docs/s fp32), while short texts gained ~25 %
# from batches of 8 (docs/benchmarks.md, issue 15): long texts go alone, short ones together.
_TOKEN_BUDGET = 512


def default_cache_root(settings: Settings) -> Path:
    """The configured cache dir; else the user's cache, else one under the data dir."""
    if settings.embedding.cache_dir is not None:
        return settings.embedding.cache_dir.expanduser()
    candidates = [Path.home() / ".cache" / "ragchat" / "embedders"]
    candidates.append(settings.data_dir / "cache" / "embedders")
    for root in candidates:
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=root):
                return root
        except OSError:
            continue
    return Path(tempfile.mkdtemp(prefix="ragchat-embedders-"))


class OnnxEmbedder:
    # A query is embedded like a one-text document (no prompt), so one vector serves both.
    symmetric = True

    def __init__(self, config: EmbeddingSettings, entry: Path, *, quantized: bool) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ModelLoadError(f"the {config.backend} backend needs onnxruntime: {exc}") from exc
        meta = read_meta(entry)
        self.model_name = config.model
        self.dim = int(meta["dim"])
        # int8 quantizes activations with one range per call: batch mates (and their padding)
        # moved a short text's vector by up to 0.034 in cosine, so each text runs alone. Long
        # texts embed as fast that way; short ones lose ~20 % (docs/benchmarks.md, issue 15).
        self.batch_size = 1 if quantized else config.batch_size
        self.quantized = quantized
        self.path = entry / (INT8_FILE if quantized else FP32_FILE)
        self._inputs: list[str] = list(meta["inputs"])
        self._pad = int(meta["pad_token_id"])
        self._lower = bool(meta.get("do_lower_case", False))
        self._tokenizer = Tokenizer.from_file(str(entry / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(config.max_seq_length)
        opts = ort.SessionOptions()
        # The same thread setting as torch: 1 measured best on a shared 2-core machine.
        opts.intra_op_num_threads = config.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads sleep instead of spinning: onnxruntime's counterpart of
        # OMP_WAIT_POLICY=PASSIVE (ragchat.runtime), which matters on a busy machine.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        try:
            self._session: Any = ort.InferenceSession(
                str(self.path), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelLoadError(f"cannot load {self.path}: {exc}") from exc
        # The tokenizer is a shared Rust object with mutable settings; onnxruntime's run is
        # thread-safe, so only tokenisation is serialised.
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> OnnxEmbedder:
        from ragchat.embed.models import resolve_model_path

        cfg = settings.embedding
        path = resolve_model_path(cfg.model)
        entry = ensure_export(
            path,
            default_cache_root(settings),
            allow_downloads=settings.allow_downloads,
            threads=cfg.threads,
        )
        return cls(cfg, entry, quantized=cfg.backend == "onnx-int8")

    # -- Embedder ------------------------------------------------------------------------------
    def _tokenise(self, texts: Sequence[str]) -> list[list[int]]:
        items = [t.lower() for t in texts] if self._lower else list(texts)
        with self._lock:
            return [e.ids for e in self._tokenizer.encode_batch(items)]

    def _run(self, ids: list[list[int]]) -> Matrix:
        width = max(len(x) for x in ids)
        input_ids = np.full((len(ids), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        out = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        return np.asarray(out[0], dtype=np.float32)

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self._tokenise(texts)
        # By token count, so a batch pads only to its own longest member; batches are cut at
        # batch_size texts or _TOKEN_BUDGET padded tokens, whichever comes first.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batch: list[int] = []
        for i in order:
            if batch and (
                len(batch) >= self.batch_size or (len(batch) + 1) * len(ids[i]) > _TOKEN_BUDGET
            ):
                out[batch] = self._run([ids[j] for j in batch])
                batch = []
            batch.append(i)
        if batch:
            out[batch] = self._run([ids[j] for j in batch])
        return out

    def embed_query(self, text: str) -> Vector:
        return self._run(self._tokenise([text]))[0]
