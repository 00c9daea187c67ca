"""Tables on PDF text layers become rows naming their columns, cited by their page."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from ragchat.ingest.pdf import PdfLoader

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
pytestmark = pytest.mark.skipif(
    not DEJAVU.is_dir(), reason="Debian's fonts-dejavu-core not installed"
)

PRICES = [
    ["Item", "Size", "Price"],
    ["Claw hammer", "16 oz", "£14.50"],
    ["Cordless drill", "18 V", "£89.00"],
    ["Spirit level", "600 mm", "£12.99"],
]


def _pdf(path: Path, borders: str, prose_page: bool = True) -> Path:
    pdf = FPDF()
    pdf.add_font("DejaVu", "", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    pdf.add_font("DejaVu", "B", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
    pdf.set_font("DejaVu", size=11)
    if prose_page:
        pdf.add_page()
        pdf.multi_cell(0, 6, "Prices include VAT. Delivery is free over 60 pounds. " * 6)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Oakfield Hardware price list for the spring season.")
    with pdf.table(borders_layout=borders, text_align="LEFT") as table:
        for row in PRICES:
            cells = table.row()
            for value in row:
                cells.cell(value)
    pdf.multi_cell(0, 6, "Prices are valid until the end of May.")
    pdf.output(str(path))
    return path


def _tables(path: Path) -> list[tuple[int, str]]:
    [doc] = PdfLoader().load(path)
    return [(s.metadata["page"], s.text) for s in doc.sections if s.table]


def test_a_ruled_table_is_read_row_by_row_on_its_page(tmp_path: Path) -> None:
    [(page, rows)] = _tables(_pdf(tmp_path / "ruled.pdf", "ALL"))
    assert page == 2
    assert rows.split("\n") == [
        "Item: Claw hammer; Size: 16 oz; Price: £14.50.",
        "Item: Cordless drill; Size: 18 V; Price: £89.00.",
        "Item: Spirit level; Size: 600 mm; Price: £12.99.",
    ]


def test_an_unruled_table_too_and_the_page_keeps_its_prose(tmp_path: Path) -> None:
    path = _pdf(tmp_path / "plain.pdf", "NONE")
    [(page, rows)] = _tables(path)
    assert page == 2 and "Item: Cordless drill; Size: 18 V; Price: £89.00." in rows
    [doc] = PdfLoader().load(path)
    prose = [s.text for s in doc.sections if s.metadata["page"] == 2 and not s.table]
    assert "Oakfield Hardware price list" in prose[0] and "valid until" in prose[0]
    assert "Cordless" not in prose[0]  # the rows are said once, as rows


def test_prose_is_not_taken_for_a_table(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    for _ in range(4):
        pdf.multi_cell(0, 6, "A plain paragraph about the warranty terms of the machine. " * 5)
        pdf.ln(4)
    path = tmp_path / "prose.pdf"
    pdf.output(str(path))
    assert _tables(path) == []
