"""Exports a sentence-transformers model to ONNX (fp32 and int8) once, into a keyed cache.

The export runs the model's own modules (transformer, pooling, any dense layers) through
``torch.onnx.export`` with L2 normalisation appended, so the graph returns what
``encode(normalize_embeddings=True)`` returns. ``onnxruntime.quantization.quantize_dynamic``
then makes the int8 copy (per-channel weights: per-tensor lost 6 points of cosine agreement
with torch on MiniLM, per-channel 0.5). Neither optimum nor sentence-transformers' own ONNX
backend is used: both need optimum, which pins transformers and huggingface_hub below the
versions ragchat runs on.

A cache entry is a directory named by a hash of the model files (path, size, mtime) and the
versions of every library that shapes the graph; it is built in a temporary sibling and
renamed into place, so a crash or a concurrent export never leaves a half-written entry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

from ragchat.errors import ModelLoadError

log = logging.getLogger(__name__)

# Bump when the export recipe changes: old cache entries are then ignored.
RECIPE = 1
FP32_FILE = "model.onnx"
INT8_FILE = "model.int8.onnx"
META_FILE = "meta.json"
_KEY_FILES = (
    "config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "tokenizer.json",
    "tokenizer_config.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)
_VERSIONED = ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def cache_key(model_path: str) -> str:
    """Changes whenever the model files or a library that shapes the exported graph change."""
    base = Path(model_path)
    files = []
    for name in _KEY_FILES:
        f = base / name
        if f.is_file():
            st = f.stat()
            files.append((name, st.st_size, st.st_mtime_ns))
    payload = {
        "path": str(base.resolve()) if base.exists() else model_path,
        "files": files,
        "versions": {d: _version(d) for d in _VERSIONED},
        "recipe": RECIPE,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in base.name or model_path)
    return f"{slug[:48]}-{digest}"


def is_complete(entry: Path) -> bool:
    return all((entry / f).is_file() for f in (FP32_FILE, INT8_FILE, META_FILE, "tokenizer.json"))


def ensure_export(
    model_path: str, cache_root: Path, *, allow_downloads: bool, threads: int = 0
) -> Path:
    """The cache entry for this model, exported now if it is not there yet."""
    entry = cache_root / cache_key(model_path)
    if is_complete(entry):
        return entry
    cache_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=cache_root))
    tmp.chmod(0o755)  # mkdtemp's 0700 would keep a shared cache from other users
    try:
        log.info("exporting %s to ONNX (once, about 15 s; cached in %s)", model_path, entry)
        try:
            _export(model_path, tmp, allow_downloads=allow_downloads, threads=threads)
        except ModelLoadError:
            raise
        except Exception as exc:  # failures inside torch.onnx / onnx / onnxruntime
            raise ModelLoadError(f"cannot export {model_path!r} to ONNX: {exc}") from exc
        try:
            os.rename(tmp, entry)
        except OSError:
            # Another process finished the same export first (the target exists and is not
            # empty): use its copy. A stale incomplete entry (from before atomic writes, or
            # edited by hand) is replaced.
            if not is_complete(entry):
                shutil.rmtree(entry, ignore_errors=True)
                os.rename(tmp, entry)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return entry


def _export(model_path: str, out: Path, *, allow_downloads: bool, threads: int) -> None:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelLoadError(
            f"exporting to ONNX needs torch and sentence-transformers: {exc}"
        ) from exc
    if threads:
        torch.set_num_threads(threads)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a "Loading weights" bar in a server's log is noise
    try:
        model = SentenceTransformer(
            model_path,
            device="cpu",
            local_files_only=not allow_downloads,
            # The eager attention exports to plain MatMul/Softmax nodes onnxruntime fuses.
            model_kwargs={"attn_implementation": "eager"},
        )
    except Exception as exc:  # the library raises many kinds; all mean "cannot load"
        raise ModelLoadError(f"cannot load {model_path!r} for the ONNX export: {exc}") from exc
    model.eval()
    tokenizer = model.tokenizer
    sample = tokenizer(
        ["a short text", "a somewhat longer second text to make padding happen"],
        padding=True,
        return_tensors="pt",
    )
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class _Normalised(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *inputs: Any) -> Any:
            features = dict(zip(names, inputs, strict=True))
            emb = self.inner(features)["sentence_embedding"]
            return torch.nn.functional.normalize(emb, p=2.0, dim=1)

    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["embedding"] = {0: "batch"}
    fp32 = out / FP32_FILE
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about Python-level checks it freezes (shapes that are always equal
        # here, attention branches fixed by "eager"); the contract tests compare the results.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Normalised().eval(),
            tuple(sample[n] for n in names),
            str(fp32),
            input_names=names,
            output_names=["embedding"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    _quantize(fp32, out / INT8_FILE)
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    dim = (
        model.get_embedding_dimension()
        if hasattr(model, "get_embedding_dimension")
        else model.get_sentence_embedding_dimension()
    )
    meta = {
        "source": model_path,
        "inputs": names,
        "dim": int(dim or 0),
        "pad_token_id": int(tokenizer.pad_token_id or 0),
        "do_lower_case": bool(getattr(model[0], "do_lower_case", False)),
        "versions": {d: _version(d) for d in _VERSIONED},
        "recipe": RECIPE,
    }
    (out / META_FILE).write_text(json.dumps(meta, indent=2))


def _quantize(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer logs every skipped node at INFO on the root logger, and at WARNING that
    # "pre-processing" could help (it does not for this model: the contract tests compare
    # int8 with fp32): neither is for the person starting a server.
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        logging.disable(previous)


def read_meta(entry: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((entry / META_FILE).read_text())
    return meta
