"""Spreadsheet loaders: Excel (.xlsx, on openpyxl) and CSV (the standard library's ``csv``).

Each sheet is a table whose rows become lines naming their columns (``ingest.tables``); a
chunk cites its sheet and the rows it holds ("Prices, rows 2–14"), numbered as the
spreadsheet numbers them. The header is the first row with two or more values (a title line
above it is kept as text). Reading is streamed (openpyxl's read-only mode), and a sheet stops
after ``MAX_EMPTY_RUN`` empty rows in a row: a sheet formatted down to row 1,048,576, or
crafted with a million empty rows, costs a moment, not minutes.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.archive import check_zip
from ragchat.ingest.tables import cell_text, table_section
from ragchat.ingest.text_utils import decode_utf8, read_bytes, sha256_hex, too_much_text
from ragchat.types import LoadedDocument, Section

MAX_EMPTY_RUN = 10_000
_PREAMBLE_ROWS = 20  # single-value rows above a header: a title, a note, a date


def _value(value: Any) -> str:
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return cell_text(value)


class _SheetReader:
    """Turns the rows of one sheet into sections; shared by the Excel and CSV loaders."""

    def __init__(self, source: str, max_chars: int | None, chars: int = 0) -> None:
        self.source = source
        self.max_chars = max_chars
        self.chars = chars
        self.warnings: list[str] = []

    def read(self, name: str, rows: Iterable[Sequence[Any]], prefix: str) -> list[Section]:
        meta = {"sheet": name}
        preamble: list[tuple[int, str]] = []
        header: list[str] | None = None
        body: list[list[str]] = []
        numbers: list[int] = []
        empty_run = 0
        for number, raw in enumerate(rows, start=1):
            cells = [_value(v) for v in raw]
            filled = sum(1 for c in cells if c)
            if not filled:
                empty_run += 1
                if empty_run >= MAX_EMPTY_RUN:
                    label = f"sheet {name!r}" if name else "the file"
                    self.warnings.append(
                        f"{label}: stopped reading at row {number:,} after "
                        f"{MAX_EMPTY_RUN:,} empty rows in a row"
                    )
                    break
                continue
            empty_run = 0
            self._count(sum(len(c) for c in cells))
            if header is None:
                if filled < 2 and len(preamble) < _PREAMBLE_ROWS:
                    preamble.append((number, " ".join(c for c in cells if c)))
                    continue
                if filled >= 2:
                    header = cells
                    continue
                # Many one-value rows: a one-column table, its first value names it.
                header = [preamble[0][1]]
                body = [[line] for _, line in preamble[1:]]
                numbers = [n for n, _ in preamble[1:]]
                preamble = []
            body.append(cells)
            numbers.append(number)
        if header is None and preamble:  # one column: its first value names it
            header = [preamble[0][1]]
            body = [[line] for _, line in preamble[1:]]
            numbers = [n for n, _ in preamble[1:]]
            preamble = []
        out: list[Section] = []
        if preamble:
            text = "\n".join(line for _, line in preamble)
            out.append(Section(text=text, locator=prefix, metadata=meta))
        if header is not None:
            table = table_section(
                header, body, locator=f"{prefix}t", metadata=meta, numbers=numbers
            )
            if table is not None:
                out.append(table)
            elif not preamble:  # a header row alone is still the sheet's text
                text = "; ".join(c for c in header if c)
                out.append(Section(text=text, locator=prefix, metadata=meta))
        return out

    def _count(self, n: int) -> None:
        self.chars += n
        if self.max_chars and self.chars > self.max_chars:
            raise IngestError(self.source, too_much_text(self.max_chars))


def _document(
    path: Path, data: bytes, sections: list[Section], warnings: list[str], meta: dict[str, Any]
) -> LoadedDocument:
    if not sections:
        reason = "no values in any sheet" + (f" ({'; '.join(warnings)})" if warnings else "")
        raise IngestError(str(path), reason)
    title = str(meta.get("title") or path.stem)
    return LoadedDocument(
        doc_id=sha256_hex(data),
        source=str(path),
        kind="spreadsheet",
        title=title,
        sections=tuple(sections),
        metadata={**meta, "title": title},
        warnings=tuple(warnings),
    )


class ExcelLoader:
    suffixes: tuple[str, ...] = (".xlsx", ".xlsm")

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        check_zip(path, "Excel workbook")
        from ragchat.ingest.xlsx_reader import UnsizedReader  # openpyxl: only for a workbook

        try:
            reader = UnsizedReader(io.BytesIO(data), read_only=True, data_only=True)
            reader.read()
            book = reader.wb
        except (zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError) as exc:
            raise IngestError(
                source, f"not a readable Excel workbook ({type(exc).__name__}: {exc})"
            ) from exc
        rows_reader = _SheetReader(source, self.max_chars)
        sections: list[Section] = []
        names: list[str] = []
        try:
            for i, sheet in enumerate(book.worksheets):
                names.append(sheet.title)
                # The dimension a file declares can claim 16,384 columns: padding every row
                # to it costs more than reading the values that are there.
                sheet.reset_dimensions()
                rows = sheet.iter_rows(values_only=True)
                sections += rows_reader.read(sheet.title, rows, f"sh{i}")
        except IngestError:
            raise
        except Exception as exc:  # openpyxl's parser on a damaged sheet
            raise IngestError(
                source, f"cannot read the workbook's sheets ({type(exc).__name__}: {exc})"
            ) from exc
        finally:
            book.close()
        props = book.properties
        meta = {"title": (props.title or "").strip(), "sheets": names}
        return [_document(path, data, sections, rows_reader.warnings, meta)]


class CsvLoader:
    suffixes: tuple[str, ...] = (".csv", ".tsv")

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        text, warnings = decode_utf8(data)
        if path.suffix.lower() == ".tsv":
            dialect: Any = csv.excel_tab
        else:
            try:
                dialect = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
        reader = _SheetReader(source, self.max_chars)
        try:
            rows = csv.reader(io.StringIO(text, newline=""), dialect)
            sections = reader.read("", rows, "sh0")
        except csv.Error as exc:
            raise IngestError(source, f"not a readable CSV file ({exc})") from exc
        return [_document(path, data, sections, [*warnings, *reader.warnings], {})]
