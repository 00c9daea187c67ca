"""The loader contract: a file in, documents with located sections out."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from ragchat.types import LoadedDocument


@runtime_checkable
class Loader(Protocol):
    """Reads one file. Raises ``IngestError`` naming the file when it cannot be parsed.

    Most formats give one document per file; JSONL/BEIR corpora give one per record.
    """

    suffixes: tuple[str, ...]

    def load(self, path: Path) -> list[LoadedDocument]: ...
