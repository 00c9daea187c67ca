"""EPUB loader on ebooklib: chapters in reading (spine) order, each cited by its title.

A chapter's title comes from the book's table of contents, else its first heading; its
sections carry ``chapter`` (the number in reading order), ``chapter_title`` and a heading path
starting with the chapter title. The XHTML of each chapter is read like a web page
(``ingest.web``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.archive import check_zip
from ragchat.ingest.structure import Outline
from ragchat.ingest.text_utils import read_bytes, sha256_hex
from ragchat.ingest.web import parse_html, walk
from ragchat.types import LoadedDocument, Section

_MAX_TOC_DEPTH = 20


def _toc_titles(toc: Iterable[Any], out: dict[str, str], depth: int = 0) -> dict[str, str]:
    """href (without #fragment) → the first TOC title pointing into it."""
    from ebooklib import epub

    if depth > _MAX_TOC_DEPTH:
        return out
    for entry in toc:
        if isinstance(entry, tuple | list) and len(entry) == 2:
            head, children = entry
            _toc_titles([head], out, depth + 1)
            _toc_titles(children, out, depth + 1)
        elif isinstance(entry, epub.Link | epub.Section):
            href = (getattr(entry, "href", "") or "").split("#")[0]
            title = " ".join((entry.title or "").split())
            if href and title:
                out.setdefault(href, title)
    return out


class EpubLoader:
    suffixes: tuple[str, ...] = (".epub",)

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        check_zip(path, "EPUB book")
        import ebooklib  # imported when a book is read, not with the registry
        from ebooklib import epub

        try:
            with warnings.catch_warnings():  # ebooklib warns about options it will change
                warnings.simplefilter("ignore")
                book = epub.read_epub(str(path), options={"ignore_ncx": False})
        except Exception as exc:  # ebooklib raises EpubException, KeyError, lxml errors ...
            raise IngestError(
                source, f"not a readable EPUB book ({type(exc).__name__}: {exc})"
            ) from exc
        titles = _toc_titles(book.toc, {})
        sections: list[Section] = []
        chars = 0
        number = 0
        for idref, *_ in book.spine:
            item = book.get_item_with_id(idref)
            if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
                continue
            root = parse_html(item.get_content(), source)
            toc_title = titles.get(item.get_name(), "")
            number += 1
            outline = Outline(
                source,
                root=[toc_title] if toc_title else [],
                prefix=f"c{number}s",
                max_chars=self.max_chars - chars if self.max_chars else None,
            )
            walk(root, outline)
            found = outline.finish()
            if not found:
                number -= 1
                continue
            title = toc_title or outline.first_heading or f"Chapter {number}"
            for section in found:
                path_ = section.metadata.get("heading_path") or []
                if not toc_title and (not path_ or path_[0] != title):
                    path_ = [title, *path_]
                section.metadata.update(
                    chapter=number, chapter_title=title, heading_path=list(path_)
                )
                chars += len(section.text)
            sections += found
        meta: dict[str, Any] = {}
        for key in ("title", "creator", "language"):
            values = book.get_metadata("DC", key)
            if values and values[0] and values[0][0]:
                meta["author" if key == "creator" else key] = " ".join(str(values[0][0]).split())
        title = meta.get("title") or path.stem
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="epub",
                title=title,
                sections=tuple(sections),
                metadata={**meta, "title": title, "chapters": number},
                warnings=() if sections else ("no text in any chapter",),
            )
        ]
