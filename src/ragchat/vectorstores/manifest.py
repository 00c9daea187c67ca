"""The manifest says what built an index; loading checks the files agree with it."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ragchat.errors import IndexStateError, ModelMismatchError

if TYPE_CHECKING:
    from ragchat.embed.base import Embedder

FORMAT_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


log = logging.getLogger(__name__)


class Manifest(BaseModel):
    format: int = FORMAT_VERSION
    name: str
    embedding_model: str
    dim: int
    dense_backend: str = "flat"
    bm25: dict[str, Any] = {"k1": 1.2, "b": 0.75, "tokenizer": "bm25s:en-stopwords+snowball"}
    chunking: dict[str, Any] = {}
    documents: int = 0
    children: int = 0
    parents: int = 0
    files: int = 0
    # Bumped by every save: a version that changes with each write, whatever its second.
    revision: int = 0
    # Set while ``kb migrate`` fills this knowledge base ("<backend>:<name>" of the source); a
    # re-run resumes a knowledge base that carries its own source's mark, and nothing else.
    migrating_from: str | None = None
    created: str
    updated: str

    def save(self, directory: Path) -> None:
        tmp = directory / "manifest.tmp.json"
        tmp.write_text(self.model_dump_json(indent=2))
        tmp.replace(directory / "manifest.json")

    @classmethod
    def load(cls, directory: Path) -> Manifest:
        path = directory / "manifest.json"
        try:
            return cls.model_validate(json.loads(path.read_text()))
        except FileNotFoundError as exc:
            raise IndexStateError(
                f"{directory} has no manifest.json: not a ragchat knowledge base"
            ) from exc
        except (ValueError, ValidationError) as exc:
            raise IndexStateError(f"{path} is corrupt: {exc}") from exc


def check_embedder(manifest: Manifest, name: str, embedder: Embedder, *, strict: bool) -> None:
    """A knowledge base opened with another embedding model than it was built with: an error
    (``ModelMismatchError``) when ``strict`` or the dimensions differ, else a warning, for
    every store alike."""
    if manifest.embedding_model == embedder.model_name and manifest.dim == embedder.dim:
        return
    msg = (
        f"knowledge base {name!r} was built with {manifest.embedding_model!r} "
        f"(dim {manifest.dim}) but the configured embedder is "
        f"{embedder.model_name!r} (dim {embedder.dim}); re-ingest it or configure "
        "the original model"
    )
    if strict or manifest.dim != embedder.dim:
        raise ModelMismatchError(msg)
    log.warning(msg)
