"""Tables as text a retriever and an answerer can use: one line per row, each cell named.

A question about one cell ("what is the dose of X for children?") matches the row that holds
it only if the row carries its column names; a chunk cut from the middle of a grid of bare
values does not. So every table, whatever format it comes from, becomes lines of the form::

    Drug: Ibuprofen; Adult dose: 400 mg; Child dose: 10 mg/kg.

one per row, in table order, empty cells left out. The chunker keeps each line whole
(``Section.table``), so a row is never split across chunks and no header needs repeating.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ragchat.types import Section

_END = (".", "!", "?")


def cell_text(value: Any) -> str:
    """One line: a cell's own line breaks would otherwise split its row."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return " ".join(str(value).split())


def column_names(header: Sequence[Any], width: int) -> list[str]:
    """Header cells, with ``Column N`` for blank ones and for cells past the header's width."""
    names = [cell_text(h) for h in header]
    names += [""] * (width - len(names))
    return [name or f"Column {i + 1}" for i, name in enumerate(names)]


def row_sentence(names: Sequence[str], cells: Sequence[Any]) -> str:
    """``Name: value; Name: value.`` — empty cells skipped; "" when the row is empty."""
    names = list(names)
    if len(cells) > len(names):
        names = column_names(names, len(cells))
    parts = []
    for name, cell in zip(names, cells, strict=False):
        text = cell_text(cell)
        if text:
            parts.append(f"{name}: {text}")
    if not parts:
        return ""
    line = "; ".join(parts)
    return line if line.endswith(_END) else line + "."


def table_lines(
    header: Sequence[Any], rows: Iterable[Sequence[Any]]
) -> tuple[list[str], list[int]]:
    """The row sentences of a table and, for each, the index of its row in ``rows``."""
    rows = list(rows)
    width = max([len(header), *(len(r) for r in rows)], default=0)
    names = column_names(header, width)
    lines: list[str] = []
    index: list[int] = []
    for i, row in enumerate(rows):
        line = row_sentence(names, row)
        if line:
            lines.append(line)
            index.append(i)
    return lines, index


def table_section(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    locator: str,
    metadata: dict[str, Any],
    numbers: Sequence[int] | None = None,
) -> Section | None:
    """A table as one ``Section`` of row lines (None when no row has a value).

    ``numbers`` are the numbers a user knows ``rows`` by (a spreadsheet's row numbers); when
    given, each chunk of the table cites the range of rows it holds.
    """
    lines, index = table_lines(header, rows)
    if not lines:
        return None
    row_numbers = tuple(numbers[i] for i in index) if numbers is not None else ()
    return Section(
        text="\n".join(lines),
        locator=locator,
        metadata=metadata,
        table=True,
        row_numbers=row_numbers,
    )
