"""Word (.docx) loader on python-docx: heading styles give each section its heading path.

python-docx rather than a converter to Markdown (markitdown, mammoth): it hands over the body
in reading order with each paragraph's style, which is all a heading path needs, and tables
as cells, which become row lines (``ingest.tables``) without a Markdown round trip.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.errors import IngestError
from ragchat.ingest.archive import check_zip
from ragchat.ingest.structure import Outline
from ragchat.ingest.tables import cell_text
from ragchat.ingest.text_utils import read_bytes, sha256_hex
from ragchat.types import LoadedDocument

if TYPE_CHECKING:  # python-docx is imported when a Word file is read, not with the registry
    from docx.table import Table
    from docx.text.paragraph import Paragraph

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.I)
_LIST_STYLE = re.compile(r"list", re.I)


def _heading_level(paragraph: Paragraph) -> int:
    """1-9 for Heading N styles (and 1 for Title), 0 for body text."""
    try:
        name = (paragraph.style.name if paragraph.style is not None else "") or ""
    except (KeyError, ValueError):  # a style id the styles part lacks
        return 0
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name.strip())
    return int(match.group(1)) if match else 0


def _rows(table: Table) -> list[list[str]]:
    """Cell texts per row; a merged cell is reported once, not once per grid column it spans."""
    rows = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(cell_text(cell.text))
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
        for block in document.iter_inner_content():
            if isinstance(block, Paragraph):
                text = block.text
                level = _heading_level(block)
                if level and text.strip():
                    outline.heading(level, text)
                elif text.strip():
                    style = block.style.name if block.style is not None else ""
                    outline.line(("- " if _LIST_STYLE.search(style or "") else "") + text)
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
                warnings=() if sections else ("no text in the Word document",),
            )
        ]
