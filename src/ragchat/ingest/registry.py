"""Which loader reads which file, and which files a folder contributes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragchat.errors import UnsupportedFileError
from ragchat.ingest.base import Loader
from ragchat.ingest.jsonl import JsonlLoader
from ragchat.ingest.markdown import MarkdownLoader
from ragchat.ingest.pdf import PdfLoader
from ragchat.ingest.text import TextLoader
from ragchat.ingest.vtt import VttLoader

_INSTANCES: tuple[Loader, ...] = (
    PdfLoader(),
    MarkdownLoader(),
    VttLoader(),
    TextLoader(),
    JsonlLoader(),
)
LOADERS: dict[str, Loader] = {suffix: ld for ld in _INSTANCES for suffix in ld.suffixes}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(LOADERS))


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in LOADERS


def loader_for(path: Path) -> Loader:
    try:
        return LOADERS[path.suffix.lower()]
    except KeyError:
        supported = " ".join(SUPPORTED_SUFFIXES)
        raise UnsupportedFileError(
            str(path), f"unsupported file type {path.suffix or '(none)'!r}; supported: {supported}"
        ) from None


def iter_files(paths: Sequence[Path]) -> list[Path]:
    """Expands folders recursively in sorted order so ingestion order never depends on the OS.

    Hidden files and folders inside an expanded folder are skipped (``.git``, ``.DS_Store``);
    unsupported files are dropped. Duplicates keep their first position.
    """
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path)
                if any(part.startswith(".") for part in rel.parts):
                    continue
                if child.is_file() and is_supported(child):
                    found.setdefault(child, None)
        elif path.is_file() and is_supported(path):
            found.setdefault(path, None)
    return list(found)
