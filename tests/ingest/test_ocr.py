"""OCR of scanned PDF pages and images with Debian's tesseract-ocr (skipped without it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from tests.ingest import samples

from ragchat.errors import IngestError
from ragchat.ingest import ocr
from ragchat.ingest.pdf import PdfLoader
from ragchat.ingest.pipeline import load_file

needs_tesseract = pytest.mark.skipif(
    ocr.tesseract() is None,
    reason="tesseract-ocr (+ tesseract-ocr-eng) not installed: scripts/ocr-deps",
)


@needs_tesseract
def test_a_scanned_pdf_is_read_page_by_page(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    samples.write_scanned_pdf(path)
    [doc] = load_file(path)
    assert [s.metadata for s in doc.sections] == [
        {"page": 1, "ocr": True},
        {"page": 2, "ocr": True},
    ]
    assert "admitted with pneumonia" in doc.sections[0].text
    assert "in two weeks for a chest X-ray" in doc.sections[1].text
    assert not doc.warnings


@needs_tesseract
def test_only_pages_without_a_text_layer_are_ocrd(tmp_path: Path) -> None:
    scan = tmp_path / "page.png"
    samples.page_image("Scanned appendix\nThe warranty lasts three years.").save(scan)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 6, "A typed first page about the warranty terms.")
    pdf.add_page()
    pdf.image(str(scan), x=0, y=0, w=210)
    path = tmp_path / "mixed.pdf"
    pdf.output(str(path))
    [doc] = PdfLoader().load(path)
    first, second = doc.sections
    assert first.metadata == {"page": 1} and first.text.startswith("A typed first page")
    assert second.metadata == {"page": 2, "ocr": True}
    assert "warranty lasts three years" in second.text


@needs_tesseract
def test_an_image_is_a_one_page_document(tmp_path: Path) -> None:
    path = tmp_path / "rx.jpg"
    samples.page_image("Prescription\nTake amoxicillin 500 mg").convert("RGB").save(
        path, quality=90
    )
    [doc] = load_file(path)
    assert doc.kind == "image" and doc.metadata["pages"] == 1
    [page] = doc.sections
    assert page.metadata == {"page": 1, "ocr": True} and "amoxicillin 500 mg" in page.text


def test_without_tesseract_scans_are_reported_not_lost_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ragchat.ingest.ocr.tesseract", lambda: None)
    monkeypatch.setattr("ragchat.ingest.images.tesseract", lambda: None)
    pdf = tmp_path / "scan.pdf"
    samples.write_scanned_pdf(pdf)
    [doc] = load_file(pdf)
    assert not doc.sections
    assert "2 page(s) without a text layer (1, 2) were not read" in doc.warnings[0]
    assert "scripts/ocr-deps" in doc.warnings[0]
    png = tmp_path / "page.png"
    samples.write_png(png)
    with pytest.raises(IngestError, match="read by OCR, which is not installed"):
        load_file(png)


def test_a_damaged_image_fails_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ragchat.ingest.images.tesseract", lambda: "/usr/bin/tesseract")
    path = tmp_path / "broken.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(IngestError, match=r"(damaged|not a readable) image"):
        load_file(path)


def _table_image(dpi: int) -> Any:
    """A ruled table of error codes drawn at ``dpi``, like a scan of a printed page."""
    from PIL import Image, ImageDraw, ImageFont

    rows = [("Code", "Meaning", "What to do"), ("E01", "Water inlet blocked", "Clean the filter")]
    rows += [("E02", "Drain pump fault", "Check the drain hose")]
    rows += [("E03", "Door not closed", "Close the door firmly")]
    image = Image.new("L", (int(8.27 * dpi), int(5 * dpi)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=int(10 * dpi / 72))
    x0, y0, row_h, widths = dpi, dpi, int(0.36 * dpi), [int(w * dpi) for w in (0.9, 2.4, 2.6)]
    for r, row in enumerate(rows):
        x = x0
        for c, cell in enumerate(row):
            draw.text((x + dpi // 12, y0 + r * row_h + dpi // 12), cell, fill=0, font=font)
            x += widths[c]
    for r in range(len(rows) + 1):
        draw.line((x0, y0 + r * row_h, x0 + sum(widths), y0 + r * row_h), fill=0, width=2)
    return image


@needs_tesseract
def test_a_scanned_table_is_read_as_rows_at_the_scans_own_resolution(tmp_path: Path) -> None:
    path = tmp_path / "codes.pdf"
    _table_image(200).save(str(path), "PDF", resolution=200.0)
    [(_, _, dpi)] = list(ocr.render_pages(path.read_bytes(), [1], str(path)))
    assert dpi == 200  # not resampled to 300
    [doc] = PdfLoader().load(path)
    [table] = [s for s in doc.sections if s.table]
    assert table.metadata == {"page": 1, "ocr": True}
    assert "Code: E02; Meaning: Drain pump fault; What to do: Check the drain hose." in table.text


@needs_tesseract
def test_specks_do_not_become_stops_and_skew_is_undone() -> None:
    from PIL import Image, ImageDraw

    image = samples.page_image("Your tenancy deposit is protected\nand the rent goes up to 940")
    draw = ImageDraw.Draw(image)
    for x, y in [(300, 500), (800, 900), (1000, 300), (200, 1200)]:
        draw.rectangle((x, y, x + 2, y + 2), fill=0)
    tilted = image.rotate(1.5, resample=Image.Resampling.BICUBIC, fillcolor=255)
    page = ocr.read_image(tilted, "scan", str(ocr.tesseract()), 150)
    assert "Your tenancy deposit is protected\nand the rent goes up to 940" in page.text


def test_a_column_of_codes_is_read_the_way_most_of_it_is() -> None:
    from ragchat.ingest.layout import Table
    from ragchat.ingest.ocr_codes import agree_codes

    rows = [["Code", "Meaning"], ["EO1", "Inlet"], ["E02.", "Pump"], ["E03", "Door"]]
    rows += [["E04", "Heater"], ["Fuse", "Mains"]]
    table = Table([list(r) for r in rows], 0, 0)
    agree_codes(table)
    assert [r[0] for r in table.rows] == ["Code", "E01", "E02", "E03", "E04", "Fuse"]
