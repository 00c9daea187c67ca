"""Tables found from where words sit on a page: a PDF's character boxes or OCR's word boxes.

A table without rules (a timetable, a price list set with tabs) is only visible in the
geometry: several lines in a row split by wide gaps into cells that line up. This module
finds such runs of lines, their columns (the vertical gutters no word of the run crosses) and
their rows (one line each, or the lines between two horizontal rules when the page draws
them), and hands back the rest of the page's lines as prose. Label/value lines (a form:
``Date of birth:   03/11/1958``) come back as ``Label: value`` lines rather than a table.

Written here rather than taken from pdfplumber's or camelot's "text"/"stream" strategies:
on our PDFs those read 1 and 7 of 7 timetable rows but also found a "table" on every page of
prose (docs/benchmarks.md, issue 35); this keeps prose out by asking for short cells.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median

# A gap between words of at least this many line heights separates two cells.
CELL_GAP = 1.1
# Lines further apart than this many line heights do not belong to one table.
ROW_GAP = 3.5
MIN_ROWS = 3  # lines with two or more cells
_WRAP_LINES = 2  # lines of one cell (a cell wrapped) a table may hold between two rows
MAX_CELL_CHARS = 32  # median cell length: longer is prose in columns, not a table
_BARS = set("|¦[]!")  # a vertical rule, as OCR reads it
_DASHES = set("-_—–=~")  # a horizontal one, when it is long


@dataclass(frozen=True)
class Word:
    """A word's box in page coordinates, y growing downwards; ``order`` is its place in the
    source's own reading order (tesseract's blocks, the PDF's content stream)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    order: int = 0


@dataclass
class Line:
    words: list[Word]

    @property
    def y0(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)

    @property
    def height(self) -> float:
        return median(w.y1 - w.y0 for w in self.words)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    def cells(self, gap: float) -> list[list[Word]]:
        out: list[list[Word]] = []
        for word in self.words:
            if out and word.x0 - out[-1][-1].x1 < gap:
                out[-1].append(word)
            else:
                out.append([word])
        return out


@dataclass
class Table:
    """Rows of cell texts, the first row naming the columns; ``pairs`` when it is a form."""

    rows: list[list[str]]
    y0: float
    y1: float
    pairs: bool = False
    words: set[int] = field(default_factory=set)  # ids of the words it holds
    cells: list[list[list[Word]]] = field(default_factory=list)  # each row's cells' words


def group_lines(words: Sequence[Word]) -> list[Line]:
    """Words into lines by vertical overlap (across columns and OCR blocks), top to bottom."""
    lines: list[Line] = []
    top = bottom = 0.0  # the last line's extent, kept as it grows
    for word in sorted(words, key=lambda w: (w.y0 + w.y1) / 2):
        mid = (word.y0 + word.y1) / 2
        if lines and (
            top <= mid <= bottom or abs(mid - (top + bottom) / 2) < 0.35 * (word.y1 - word.y0)
        ):
            lines[-1].words.append(word)
            top, bottom = min(top, word.y0), max(bottom, word.y1)
            continue
        lines.append(Line([word]))
        top, bottom = word.y0, word.y1
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
    return lines


def find_tables(
    words: Sequence[Word], rules: Sequence[float] = (), skip: Sequence[tuple[float, float]] = ()
) -> list[Table]:
    """Tables among ``words``; ``rules`` are the y of horizontal rules drawn on the page
    (rows of a ruled table end there); lines inside a ``skip`` band (tables found otherwise)
    are left alone."""
    words = [w for w in words if not is_rule(w.text)]
    lines = [
        ln
        for ln in group_lines(words)
        if not any(a - 1 <= (ln.y0 + ln.y1) / 2 <= b + 1 for a, b in skip)
    ]
    if not lines:
        return []
    height = median(ln.height for ln in lines) or 1.0
    gap = CELL_GAP * height
    multi = [len(ln.cells(CELL_GAP * ln.height)) >= 2 for ln in lines]
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        if not multi[i]:
            i += 1
            continue
        j = i
        end = i
        while j + 1 < len(lines) and lines[j + 1].y0 - lines[j].y1 <= ROW_GAP * height:
            if multi[j + 1]:
                end = j + 1
            elif not any(multi[j + 2 : j + 2 + _WRAP_LINES]):
                break
            j += 1
        found = _table(lines[i : end + 1], gap, rules, height)
        if found:
            tables += found
            i = end + 1
        else:
            i += 1
    return tables


def _table(run: list[Line], gap: float, rules: Sequence[float], height: float) -> list[Table]:
    if sum(len(ln.cells(CELL_GAP * ln.height)) >= 2 for ln in run) < MIN_ROWS:
        return []
    columns = _columns(run, gap)
    # A row of the table whose cell runs across a gutter (a long value under a short one)
    # joins the columns on both sides of it.
    while len(columns) >= 2:
        rows = [ln for ln in run if len(ln.cells(CELL_GAP * ln.height)) >= 2]
        crossed = {g for ln in rows for g in _crossed(ln, columns)}
        if not crossed:
            break
        merged = [columns[0]]
        for g, column in enumerate(columns[1:]):
            if g in crossed:
                merged[-1] = (merged[-1][0], max(merged[-1][1], column[1]))
            else:
                merged.append(column)
        columns = merged
    if len(columns) < 2:
        return []
    crossing = [k for k, ln in enumerate(run) if _crossed(ln, columns)]
    if crossing:  # a line of prose runs across the columns: the table is on one side of it
        parts, start = [], 0
        for k in [*crossing, len(run)]:
            if k > start:
                parts += _table(run[start:k], gap, rules, height)
            start = k + 1
        return parts
    table = _grid(run, columns, rules, height)
    return [table] if table is not None else []


def _crossed(line: Line, columns: list[tuple[float, float]]) -> set[int]:
    """The gutters (by index) between two columns that a word of ``line`` lies across."""
    gutters = [(a[1], b[0]) for a, b in itertools.pairwise(columns)]
    return {g for w in line.words for g, (g0, g1) in enumerate(gutters) if w.x0 < g0 and w.x1 > g1}


def _grid(
    run: list[Line], columns: list[tuple[float, float]], rules: Sequence[float], height: float
) -> Table | None:
    grid: list[list[list[Word]]] = []
    for line in run:
        cells: list[list[Word]] = [[] for _ in columns]
        for word in line.words:
            cells[_column_of(word, columns)].append(word)
        grid.append(cells)
    filled = [sum(1 for c in row if c) for row in grid]
    if sum(f >= 2 for f in filled) < MIN_ROWS:
        return None
    texts = [" ".join(w.text for w in c) for row in grid for c in row if c]
    if median(len(t) for t in texts) > MAX_CELL_CHARS and len(columns) < 3:
        return None  # prose set in two columns
    by_row = _rows(run, grid, rules, height)
    rows = [[" ".join(w.text for w in cell) for cell in row] for row in by_row]
    words = {id(w) for line in run for w in line.words}
    if len(columns) == 2 and sum(r[0].endswith(":") for r in rows) >= 0.6 * len(rows):
        pairs = [[r[0].rstrip(":").strip(), r[1]] for r in rows]
        return Table(pairs, run[0].y0, run[-1].y1, pairs=True, words=words)
    return Table(rows, run[0].y0, run[-1].y1, words=words, cells=by_row)


def _columns(run: list[Line], gap: float) -> list[tuple[float, float]]:
    """Column spans: x ranges between gutters that no word of the run crosses, each at least a
    cell gap wide. A line's single wide cell (a title) does not close a gutter."""
    spans = sorted(
        (w.x0, w.x1) for ln in run if len(ln.cells(CELL_GAP * ln.height)) >= 2 for w in ln.words
    )
    columns: list[tuple[float, float]] = []
    for x0, x1 in spans:
        if columns and x0 - columns[-1][1] < gap:
            columns[-1] = (columns[-1][0], max(columns[-1][1], x1))
        else:
            columns.append((x0, x1))
    return columns


def _column_of(word: Word, columns: list[tuple[float, float]]) -> int:
    mid = (word.x0 + word.x1) / 2
    best = 0
    for k, (a, _b) in enumerate(columns):
        if mid >= a - 1:
            best = k
    return best


def _rows(
    run: list[Line], grid: list[list[list[Word]]], rules: Sequence[float], height: float
) -> list[list[list[Word]]]:
    """One row per line; a line with its first cell empty continues the row above (a cell
    wrapped over two lines). Between horizontal rules, all lines between two rules are one
    row."""
    inside = sorted(r for r in rules if run[0].y0 - height <= r <= run[-1].y1 + height)
    groups: list[list[int]] = []
    if len(inside) >= 3:
        for k, line in enumerate(run):
            mid = (line.y0 + line.y1) / 2
            band = sum(r < mid for r in inside)
            if groups and _band(run[groups[-1][0]], inside) == band:
                groups[-1].append(k)
            else:
                groups.append([k])
        # Rules that are not the table's (a form's underlines, found on some lines only) put
        # two rows between two rules: then every line is a row, as without rules.
        if any(sum(sum(1 for c in grid[k] if c) >= 2 for k in g) > 1 for g in groups):
            groups = []
    if not groups:
        for k, cells in enumerate(grid):
            if groups and not cells[0] and sum(1 for c in cells if c) == 1:
                groups[-1].append(k)
            else:
                groups.append([k])
    return [
        [[w for k in group for w in grid[k][col]] for col in range(len(grid[0]))]
        for group in groups
    ]


def _band(line: Line, rules: list[float]) -> int:
    mid = (line.y0 + line.y1) / 2
    return sum(r < mid for r in rules)


def is_rule(text: str) -> bool:
    """OCR reads a table's ruling as words of bars, or of three dashes or more (a hyphen
    between two words is a word)."""
    return bool(text) and (
        all(ch in _BARS for ch in text) or (len(text) >= 3 and all(ch in _DASHES for ch in text))
    )


def prose_lines(words: Sequence[Word], tables: Sequence[Table]) -> list[str]:
    """The lines of the words outside ``tables``, in the source's reading order."""
    taken: set[int] = set().union(*(t.words for t in tables)) if tables else set()
    rest = [w for w in words if id(w) not in taken]
    return [ln.text for ln in group_lines(rest)]
