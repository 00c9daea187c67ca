"""Load many files, keep going past bad ones: one corrupt PDF must not cost the whole folder."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from ragchat.errors import IngestError
from ragchat.ingest import degenerate
from ragchat.ingest.registry import is_supported, iter_files, loader_for
from ragchat.types import LoadedDocument

logger = logging.getLogger(__name__)

ErrorCallback = Callable[[IngestError], None]


def load_file(path: Path) -> list[LoadedDocument]:
    """Loads one file; anything but an ``IngestError`` from a loader is a bug, still reported.
    Degenerate text (``ingest.degenerate``) fails the file with its reason."""
    loader = loader_for(path)
    try:
        docs = loader.load(path)
    except IngestError:
        raise
    except Exception as exc:
        logger.exception("unexpected error loading %s", path)
        raise IngestError(str(path), f"unexpected {type(exc).__name__}: {exc}") from exc
    degenerate.check(docs, str(path))
    return docs


def load_paths(
    paths: Sequence[Path], *, on_error: ErrorCallback | None = None
) -> tuple[list[LoadedDocument], list[IngestError]]:
    """Loads every supported file under ``paths`` (sorted), collecting errors instead of raising.

    Explicitly named files that are missing or unsupported are reported as errors rather than
    silently skipped. ``on_error`` is called as each error happens (for live progress output).
    """
    errors: list[IngestError] = []

    def fail(err: IngestError) -> None:
        errors.append(err)
        if on_error is not None:
            on_error(err)

    for path in paths:
        if not path.exists():
            fail(IngestError(str(path), "no such file or directory"))
        elif path.is_file() and not is_supported(path):
            try:
                loader_for(path)
            except IngestError as err:
                fail(err)

    documents: list[LoadedDocument] = []
    for file in iter_files(paths):
        try:
            documents.extend(load_file(file))
        except IngestError as err:
            fail(err)
    return documents, errors
