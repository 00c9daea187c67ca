"""Word (.docx) loader on python-docx: heading styles give each section its heading path.

python-docx rather than a converter to Markdown (markitdown, mammoth): it hands over the body
in reading order with each paragraph's style, which is all a heading path needs, and tables
as cells, which become row lines (``ingest.tables``) without a Markdown round trip. A picture
in a paragraph that holds text (a pasted screenshot of a table) is read by OCR
(``ingest.pictures``) under the heading it sits under.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.errors import IngestError
from ragchat.ingest.archive import check_zip
from ragchat.ingest.pictures import Pictures, page_lines, page_tables
from ragchat.ingest.structure import Outline
from ragchat.ingest.tables import cell_text
from ragchat.ingest.text_utils import read_bytes, sha256_hex
from ragchat.types import LoadedDocument

if TYPE_CHECKING:  # python-docx is imported when a Word file is read, not with the registry
    from docx.table import Table

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.I)
_LIST_STYLE = re.compile(r"list", re.I)


def _level(style: str) -> int:
    """1-9 for Heading N styles (and 1 for Title), 0 for body text."""
    if style.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(style.strip())
    return int(match.group(1)) if match else 0


def _style_names(document: Any) -> dict[str, str]:
    """Style id → name, read once: python-docx's ``paragraph.style`` searches the styles part
    on every call (5 ms each: 10 s for a 200-section document)."""
    names: dict[str, str] = {}
    for style in document.styles:
        try:
            names[style.style_id] = style.name or ""
        except (KeyError, ValueError):
            continue
    return names


def _cell(cell: Any, depth: int = 0) -> str:
    """A cell's text, with the text of tables nested in it (``cell.text`` has only its
    paragraphs)."""
    parts = [cell.text]
    if depth < 5:
        parts += [_cell(c, depth + 1) for t in cell.tables for row in t.rows for c in row.cells]
    return cell_text(" ".join(p for p in parts if p.strip()))


def _rows(table: Table) -> list[list[str]]:
    """Cell texts per row; a merged cell's text is given once, in its first column, so the
    cells after it stay under their own column names."""
    rows = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                cells.append("")
                continue
            seen.add(id(cell._tc))
            cells.append(_cell(cell))
        rows.append(cells)
    return rows


class WordLoader:
    suffixes: tuple[str, ...] = (".docx",)

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        check_zip(path, "Word document")
        import docx
        from docx.text.paragraph import Paragraph

        try:
            document = docx.Document(str(path))
        except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors ...
            raise IngestError(
                source, f"not a readable Word document ({type(exc).__name__}: {exc})"
            ) from exc
        outline = Outline(source, max_chars=self.max_chars)
        styles = _style_names(document)
        pictures = Pictures(source)
        for block in document.iter_inner_content():
            if isinstance(block, Paragraph):
                _pictures(block, document, pictures, outline)
                text = block.text
                if not text.strip():
                    continue
                style = styles.get(block._p.style or "", "")
                level = _level(style)
                if level:
                    outline.heading(level, text)
                else:
                    outline.line(("- " if _LIST_STYLE.search(style) else "") + text)
            else:
                rows = _rows(block)
                if rows:
                    outline.table(rows[0], rows[1:])
        sections = outline.finish()
        props: dict[str, Any] = {}
        core = document.core_properties
        for key in ("title", "author", "subject"):
            value = getattr(core, key, None)
            if value:
                props[key] = str(value).strip()
        title = props.get("title") or outline.first_heading or path.stem
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="docx",
                title=title,
                sections=tuple(sections),
                metadata={**props, "title": title},
                warnings=pictures.warnings()
                + (() if sections else ("no text in the Word document",)),
            )
        ]


def _pictures(paragraph: Any, document: Any, pictures: Pictures, outline: Outline) -> None:
    """The text of the pictures in ``paragraph``, into the outline where they sit."""
    if pictures.command is None:
        return
    for rid in paragraph._p.xpath(".//a:blip/@r:embed"):
        part = document.part.related_parts.get(rid)
        blob = getattr(part, "blob", None)
        if not blob:
            continue
        page = pictures.from_bytes(blob)
        if page is None:
            continue
        for line in page_lines(page):
            outline.line(line)
        for rows in page_tables(page):
            outline.table(rows[0], rows[1:])
