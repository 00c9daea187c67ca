"""openpyxl's read-only workbook reader, minus a whole-sheet scan a crafted file can trigger."""

from __future__ import annotations

from openpyxl.reader.excel import ExcelReader
from openpyxl.worksheet._read_only import ReadOnlyWorksheet


class _UnsizedSheet(ReadOnlyWorksheet):
    """A read-only sheet that does not look for its size when opened.

    openpyxl reads a sheet's size from its ``<dimension>`` element and, when a file has none,
    parses the whole sheet to find it: 30 s for a crafted sheet of a million empty rows,
    before the first row is read. The rows are read without it (``reset_dimensions``).
    """

    def _get_size(self) -> None:
        self._min_column = self._min_row = 1
        self._max_column = self._max_row = None


class UnsizedReader(ExcelReader):
    """openpyxl's read-only workbook reader with ``_UnsizedSheet`` worksheets (chart sheets,
    which hold no cells, are left out)."""

    def read_worksheets(self) -> None:
        for sheet, rel in self.parser.find_sheets():
            if rel.target not in self.valid_files or "chartsheet" in rel.Type:
                continue
            ws = _UnsizedSheet(self.wb, sheet.name, rel.target, self.shared_strings)
            ws.sheet_state = sheet.state
            self.wb._sheets.append(ws)
