"""Tables on the text layer of PDF pages, read as rows that name their columns.

Ruled tables (a grid of lines) are read by pdfplumber, which takes cells from the lines'
crossings, merged and wrapped cells included. Tables without a grid (columns set apart by
space, perhaps with horizontal rules only) are found from the characters' boxes that pdfium
gives (``ingest.layout``). Measured on our PDFs (docs/benchmarks.md, issue 35): pdfplumber's
and camelot's lattice readers both read every row of the ruled tables and no table on prose;
their text/stream strategies read 1 and 7 of 7 rows of an unruled timetable but found a table
on every page of prose; camelot needs OpenCV and Ghostscript and took 1.1 s a page.

Only pages that may hold a table pay for this: pdfium's text runs show cells side by side on
three lines or more, or the page draws lines.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragchat.ingest.layout import CELL_GAP, MIN_ROWS, Table, Word, find_tables, group_lines

log = logging.getLogger(__name__)

_CLOSED = re.compile(r"[.!?:;,]$")
_LETTER = re.compile(r"[A-Za-z]")


@dataclass
class PageTables:
    """A page with tables: its prose (the lines outside them) and its tables' rows."""

    prose: list[str]
    tables: list[list[list[str]]] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # the heading each table sits under


def find_pdf_tables(data: bytes, pages: Sequence[int]) -> dict[int, PageTables]:
    """Pages (1-based, among ``pages``) that hold a table; a page that pdfium or pdfplumber
    cannot read is left to the plain text."""
    import pypdfium2 as pdfium

    found: dict[int, PageTables] = {}
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return found
    plumber: Any = None
    try:
        for number in pages:
            page = pdf[number - 1]
            try:
                textpage = page.get_textpage()
                height = page.get_size()[1]
                hrules, vrules = _rules(page, height)
                ruled = len(hrules) >= 2 and len(vrules) >= 2
                if not ruled and not _side_by_side(textpage):
                    continue
                words = _words(textpage, height)
                grids: list[tuple[tuple[float, float, float, float], list[list[str]]]] = []
                if ruled:
                    if plumber is None:
                        import pdfplumber

                        plumber = pdfplumber.open(io.BytesIO(data))
                    grids = _ruled(plumber.pages[number - 1])
                inside = [(b[1], b[3]) for b, _ in grids]
                loose = find_tables(words, rules=hrules, skip=inside)
                if not grids and not loose:
                    continue
                found[number] = _page(words, grids, loose)
            except Exception as exc:  # a damaged page keeps its plain text
                log.debug("page %d: no table reading (%s)", number, exc)
            finally:
                page.close()
    finally:
        if plumber is not None:
            plumber.close()
        pdf.close()
    return found


def _page(
    words: list[Word],
    grids: list[tuple[tuple[float, float, float, float], list[list[str]]]],
    loose: list[Table],
) -> PageTables:
    taken: set[int] = set().union(*(t.words for t in loose)) if loose else set()
    for (x0, top, x1, bottom), _ in grids:
        for w in words:
            if x0 - 1 <= (w.x0 + w.x1) / 2 <= x1 + 1 and top - 1 <= (w.y0 + w.y1) / 2 <= bottom + 1:
                taken.add(id(w))
    lines = group_lines([w for w in words if id(w) not in taken])
    prose = [ln.text for ln in lines]
    tables: list[list[list[str]]] = []
    headings: list[str] = []
    ordered = sorted(
        [(b[1], rows, False) for b, rows in grids] + [(t.y0, t.rows, t.pairs) for t in loose],
        key=lambda item: item[0],
    )
    for top, rows, pairs in ordered:
        if pairs:
            prose += [f"{label}: {value}" for label, value in rows]
        else:
            tables.append(rows)
            above = [ln.text for ln in lines if ln.y1 <= top + 1]
            headings.append(heading_above(above))
    return PageTables(prose, tables, headings)


def heading_above(lines: list[str]) -> str:
    """The last line above a table that reads as a heading (short, no closing punctuation):
    a table's rows are a section of their own, and the answerer reads what they are about
    from it ("4. Error codes"), as it does from a heading over the flat text."""
    for line in reversed(lines):
        text = line.strip()
        if text and len(text.split()) <= 12 and not _CLOSED.search(text) and _LETTER.search(text):
            return text
    return ""


def _ruled(page: Any) -> list[tuple[tuple[float, float, float, float], list[list[str]]]]:
    out = []
    for table in page.find_tables():
        rows = [[" ".join((c or "").split()) for c in row] for row in table.extract()]
        rows = [r for r in rows if any(r)]
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
            out.append((tuple(table.bbox), rows))
    return out


def _rules(page: Any, height: float) -> tuple[list[float], list[float]]:
    """The y (top-down) of the page's horizontal rules and the x of its vertical ones: thin
    path objects, or the edges of filled rectangles a generator draws as a cell border."""
    import pypdfium2.raw as pdfium_c

    hrules: list[float] = []
    vrules: list[float] = []
    for count, obj in enumerate(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=2)):
        if count > 5000:
            break
        left, bottom, right, top = obj.get_bounds()
        w, h = right - left, top - bottom
        if w > 20 and h < 3:
            hrules.append(height - (top + bottom) / 2)
        elif h > 8 and w < 3:
            vrules.append((left + right) / 2)
        elif w > 20 and h > 8:  # a rectangle: its four edges
            hrules += [height - top, height - bottom]
            vrules += [left, right]
    return sorted(set(hrules)), sorted(set(vrules))


def _side_by_side(textpage: Any) -> bool:
    """Text runs set apart on one line, on at least ``MIN_ROWS`` lines: a table may be there."""
    boxes = [textpage.get_rect(i) for i in range(min(textpage.count_rects(), 4000))]
    if len(boxes) < 2 * MIN_ROWS:
        return False
    words = [Word("x", b[0], -b[3], b[2], -b[1]) for b in boxes]
    lines = group_lines(words)
    heights = sorted(ln.height for ln in lines)
    gap = CELL_GAP * heights[len(heights) // 2]
    return sum(len(ln.cells(gap)) >= 2 for ln in lines) >= MIN_ROWS


def _words(textpage: Any, height: float) -> list[Word]:
    """Words from the characters' boxes: a break at a space or where the next character does
    not follow on (a cell set apart without a space character)."""
    count = textpage.count_chars()
    text = textpage.get_text_range(0, count)
    if len(text) != count:
        return []
    words: list[Word] = []
    chars: list[tuple[str, float, float, float, float]] = []

    def flush() -> None:
        if chars:
            words.append(
                Word(
                    "".join(c[0] for c in chars),
                    min(c[1] for c in chars),
                    height - max(c[4] for c in chars),
                    max(c[3] for c in chars),
                    height - min(c[2] for c in chars),
                    len(words),
                )
            )
            chars.clear()

    for i, ch in enumerate(text):
        if ch.isspace() or ch == "\x00":
            flush()
            continue
        left, bottom, right, top = textpage.get_charbox(i, loose=True)
        if chars:
            prev = chars[-1]
            size = max(prev[4] - prev[2], 1.0)
            if left - prev[3] > 0.3 * size or abs(bottom - prev[2]) > 0.5 * size:
                flush()
        chars.append((ch, left, bottom, right, top))
    flush()
    return words
