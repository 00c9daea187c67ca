"""Which loader reads which file, and which files a folder contributes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragchat.errors import UnsupportedFileError
from ragchat.ingest.base import Loader
from ragchat.ingest.epub import EpubLoader
from ragchat.ingest.images import ImageLoader
from ragchat.ingest.jsonl import JsonlLoader
from ragchat.ingest.legacy import LegacyOfficeLoader
from ragchat.ingest.markdown import MarkdownLoader
from ragchat.ingest.pdf import PdfLoader
from ragchat.ingest.sheets import CsvLoader, ExcelLoader
from ragchat.ingest.slides import SlidesLoader
from ragchat.ingest.text import TextLoader
from ragchat.ingest.vtt import VttLoader
from ragchat.ingest.web import HtmlLoader
from ragchat.ingest.word import WordLoader

_INSTANCES: tuple[Loader, ...] = (
    PdfLoader(),
    MarkdownLoader(),
    VttLoader(),
    TextLoader(),
    JsonlLoader(),
    WordLoader(),
    SlidesLoader(),
    ExcelLoader(),
    CsvLoader(),
    HtmlLoader(),
    EpubLoader(),
    ImageLoader(),
    LegacyOfficeLoader(),
)
LOADERS: dict[str, Loader] = {suffix: ld for ld in _INSTANCES for suffix in ld.suffixes}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(sorted(LOADERS))
# What people call the formats, for listings (`ragchat formats`, `/kb`, the file picker).
FORMATS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("PDF (scanned pages by OCR)", PdfLoader.suffixes),
    ("Word", WordLoader.suffixes),
    ("PowerPoint", SlidesLoader.suffixes),
    ("Excel", ExcelLoader.suffixes),
    ("CSV", CsvLoader.suffixes),
    ("HTML", HtmlLoader.suffixes),
    ("EPUB", EpubLoader.suffixes),
    ("Markdown", MarkdownLoader.suffixes),
    ("WebVTT transcript", VttLoader.suffixes),
    ("Plain text", TextLoader.suffixes),
    ("JSONL corpus", JsonlLoader.suffixes),
    ("Image (OCR)", ImageLoader.suffixes),
    ("Word, Excel, PowerPoint 97-2003 (by LibreOffice)", LegacyOfficeLoader.suffixes),
)


def bounded_loader(path: Path, *, max_chars: int | None, max_pages: int | None) -> Loader:
    """A loader for ``path`` that stops as soon as the file is over a limit (the sandbox's):
    the text it extracts (``max_chars``) or its pages (``max_pages``)."""
    loader = loader_for(path)
    if isinstance(loader, PdfLoader):
        return PdfLoader(max_pages, max_chars)
    if isinstance(loader, ImageLoader):
        return ImageLoader(max_chars, max_pages)
    if isinstance(
        loader,
        WordLoader
        | SlidesLoader
        | ExcelLoader
        | CsvLoader
        | HtmlLoader
        | EpubLoader
        | LegacyOfficeLoader,
    ):
        return type(loader)(max_chars)
    return loader


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in LOADERS


def loader_for(path: Path) -> Loader:
    try:
        return LOADERS[path.suffix.lower()]
    except KeyError:
        raise _unsupported(path) from None


def supported_types() -> str:
    """One line naming every readable format and its file suffixes, for messages and help."""
    return "; ".join(f"{name} ({' '.join(suffixes)})" for name, suffixes in FORMATS)


def unsupported_files(paths: Sequence[Path]) -> list[UnsupportedFileError]:
    """The files ``iter_files`` leaves out for their type, each with the reason, named as
    given or found (hidden files inside a folder are left out silently, as there)."""
    found: list[UnsupportedFileError] = []
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path)
                if any(part.startswith(".") for part in rel.parts):
                    continue
                if child.is_file() and not is_supported(child):
                    found.append(_unsupported(child))
        elif path.is_file() and not is_supported(path):
            found.append(_unsupported(path))
    return found


def _unsupported(path: Path) -> UnsupportedFileError:
    return UnsupportedFileError(
        str(path),
        f"unsupported file type {path.suffix or '(none)'!r}; supported: {supported_types()}",
    )


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
