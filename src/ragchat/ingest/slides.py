"""PowerPoint (.pptx) loader on python-pptx: one section per slide, cited as "slide 3 — Title".

A slide's text is its title, then its shapes top to bottom, then its speaker notes (often
where the substance of a talk is). A table on a slide is its own section of row lines
(``ingest.tables``) with the same slide number and title. Footers, dates and slide numbers
are left out: they repeat on every slide and answer nothing. A picture on a slide that holds
text (a pasted table, a photographed notice) is read by OCR (``ingest.pictures``): its lines
join the slide's text, its tables are sections of the slide.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.errors import IngestError
from ragchat.ingest.archive import check_zip
from ragchat.ingest.pictures import Pictures, page_lines, page_tables
from ragchat.ingest.tables import cell_text, table_section
from ragchat.ingest.text_utils import normalize_ws, read_bytes, sha256_hex, too_much_text
from ragchat.types import LoadedDocument, Section

if TYPE_CHECKING:  # python-pptx is imported when a deck is read, not with the registry
    from pptx.shapes.base import BaseShape
    from pptx.slide import Slide

_MAX_GROUP_DEPTH = 20


@cache
def _kinds() -> tuple[set[Any], set[Any]]:
    """Placeholders left out (footer, date, slide number) and title placeholders."""
    from pptx.enum.shapes import PP_PLACEHOLDER as P

    return {P.FOOTER, P.DATE, P.SLIDE_NUMBER}, {P.TITLE, P.CENTER_TITLE, P.VERTICAL_TITLE}


def _placeholder_type(shape: BaseShape) -> Any:
    if not shape.is_placeholder:
        return None
    try:
        return shape.placeholder_format.type
    except ValueError:
        return None


def _shapes(shapes: Any, depth: int = 0) -> Iterator[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""

    def key(shape: BaseShape) -> tuple[int, int]:
        return (shape.top or 0, shape.left or 0)

    from pptx.shapes.group import GroupShape

    for shape in sorted(shapes, key=key):
        if isinstance(shape, GroupShape):
            if depth < _MAX_GROUP_DEPTH:
                yield from _shapes(shape.shapes, depth + 1)
        else:
            yield shape


def _title(slide: Slide) -> str:
    titles = _kinds()[1]
    for shape in slide.placeholders:
        if _placeholder_type(shape) in titles and shape.has_text_frame:
            return " ".join(shape.text_frame.text.split())
    return ""


class SlidesLoader:
    suffixes: tuple[str, ...] = (".pptx",)

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        check_zip(path, "PowerPoint file")
        from pptx import Presentation

        try:
            deck = Presentation(str(path))
        except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors ...
            raise IngestError(
                source, f"not a readable PowerPoint file ({type(exc).__name__}: {exc})"
            ) from exc
        sections: list[Section] = []
        chars = 0
        pictures = Pictures(source)
        for number, slide in enumerate(deck.slides, start=1):
            for section in self._slide(slide, number, pictures):
                chars += len(section.text)
                if self.max_chars and chars > self.max_chars:
                    raise IngestError(source, too_much_text(self.max_chars))
                sections.append(section)
        core_title = (deck.core_properties.title or "").strip()
        first_title = next((t for s in sections if (t := s.metadata.get("slide_title"))), "")
        title = core_title or first_title or path.stem
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="pptx",
                title=title,
                sections=tuple(sections),
                metadata={"title": title, "slides": len(deck.slides)},
                warnings=pictures.warnings() + (() if sections else ("no text on any slide",)),
            )
        ]

    @staticmethod
    def _slide(slide: Slide, number: int, pictures: Pictures) -> list[Section]:
        title = _title(slide)
        meta = {"slide": number, "slide_title": title}
        # A table's rows are a section of their own: the title says what they are about, as a
        # heading does over a Word table (the answerer reads it; the citation stays the slide).
        table_meta = {**meta, "heading": title} if title else meta
        lines: list[str] = [title] if title else []
        tables: list[Section] = []
        skip, titles = _kinds()
        for shape in _shapes(slide.shapes):
            kind = _placeholder_type(shape)
            if kind in skip or kind in titles:
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = [[cell_text(c.text) for c in row.cells] for row in shape.table.rows]
                if len(rows) == 1:  # a one-row table is a line of text
                    lines.append(" | ".join(c for c in rows[0] if c))
                    continue
                section = table_section(
                    rows[0] if rows else [],
                    rows[1:],
                    locator=f"sl{number}.{len(tables) + 1}",
                    metadata=table_meta,
                )
                if section is not None:
                    tables.append(section)
            elif _is_picture(shape):
                page = pictures.from_bytes(shape.image.blob)
                if page is None:
                    continue
                lines += page_lines(page)
                for rows in page_tables(page):
                    section = table_section(
                        rows[0],
                        rows[1:],
                        locator=f"sl{number}.{len(tables) + 1}",
                        metadata=table_meta,
                    )
                    if section is not None:
                        tables.append(section)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    text = " ".join(paragraph.text.split())
                    if text:
                        lines.append(f"- {text}" if paragraph.level else text)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            text = normalize_ws(notes.text) if notes is not None else ""
            if text:
                lines += ["Speaker notes:", text]
        out = []
        if lines and lines != [title]:
            out.append(Section(text="\n".join(lines), locator=f"sl{number}", metadata=meta))
        elif title and not tables:
            out.append(Section(text=title, locator=f"sl{number}", metadata=meta))
        return out + tables


def _is_picture(shape: Any) -> bool:
    """A picture shape whose image can be read (a linked picture has none)."""
    from pptx.shapes.picture import Picture

    if not isinstance(shape, Picture):  # placeholder pictures are Pictures too
        return False
    try:
        return bool(shape.image.blob)
    except (AttributeError, KeyError, ValueError):
        return False
