"""Text in pictures inside Word files, slides and PDF pages with a text layer, read by OCR
where the picture sits (skipped without tesseract)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF
from tests.ingest.test_ocr import _table_image

from ragchat.ingest import ocr
from ragchat.ingest.pipeline import load_file

pytestmark = pytest.mark.skipif(
    ocr.tesseract() is None,
    reason="tesseract-ocr (+ tesseract-ocr-eng) not installed: scripts/ocr-deps",
)


def _has_row(rows: str) -> bool:
    """The E02 row, naming its columns (OCR may read "What to do" as "What todo")."""
    return any(
        line.startswith("Code: E02; Meaning: Drain pump fault; What") and "drain hose" in line
        for line in rows.split("\n")
    )


@pytest.fixture
def picture(tmp_path: Path) -> Path:
    path = tmp_path / "table.png"
    _table_image(150).crop((100, 100, 1150, 500)).save(path)
    return path


def _table_rows(path: Path) -> list[tuple[dict[str, object], str]]:
    [doc] = load_file(path)
    return [(s.metadata, s.text) for s in doc.sections if s.table]


def test_a_table_pasted_into_a_word_file_is_rows_under_its_heading(
    tmp_path: Path, picture: Path
) -> None:
    import docx
    from docx.shared import Inches

    document = docx.Document()
    document.add_heading("Troubleshooting", 1)
    document.add_paragraph("The codes are in the picture below.")
    document.add_picture(str(picture), width=Inches(6))
    document.add_heading("Warranty", 1)
    document.add_paragraph("Two years.")
    path = tmp_path / "manual.docx"
    document.save(str(path))
    [(meta, rows)] = _table_rows(path)
    assert meta["heading_path"] == ["Troubleshooting"] and _has_row(rows)


def test_a_table_pasted_on_a_slide_is_rows_of_that_slide(tmp_path: Path, picture: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Welcome"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Error codes"
    slide.shapes.add_picture(str(picture), Inches(0.5), Inches(1.5), width=Inches(9))
    path = tmp_path / "deck.pptx"
    deck.save(str(path))
    [(meta, rows)] = _table_rows(path)
    assert meta == {"slide": 2, "slide_title": "Error codes", "heading": "Error codes"}
    assert _has_row(rows)


def test_a_picture_on_a_text_page_is_read_and_a_photo_adds_nothing(
    tmp_path: Path, picture: Path
) -> None:
    from PIL import Image

    noise = tmp_path / "photo.png"
    Image.effect_noise((400, 300), 60).save(noise)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Service manual. The error codes are in the picture.")
    pdf.image(str(picture), x=10, y=40, w=190)
    pdf.add_page()
    pdf.multi_cell(0, 6, "A photo of the machine.")
    pdf.image(str(noise), x=10, y=40, w=100)
    path = tmp_path / "manual.pdf"
    pdf.output(str(path))
    [doc] = load_file(path)
    assert [s.text for s in doc.sections if s.metadata["page"] == 2] == ["A photo of the machine."]
    [table] = [s for s in doc.sections if s.table]
    assert table.metadata == {"page": 1, "picture": True} and _has_row(table.text)
