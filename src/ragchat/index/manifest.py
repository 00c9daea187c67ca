"""The manifest says what built an index; loading checks the files agree with it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ragchat.errors import IndexStateError

FORMAT_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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
