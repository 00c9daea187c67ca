from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from ragchat.errors import IngestError
from ragchat.ingest.pdf import NO_TEXT_WARNING, PdfLoader

PdfFactory = Callable[..., Path]


def test_three_pages_keep_exact_page_numbers_and_text(make_pdf: PdfFactory) -> None:
    pages = [f"Page {n} talks about topic number {n}. It has a second sentence." for n in (1, 2, 3)]
    path = make_pdf(pages, title="Annual Report")
    [doc] = PdfLoader().load(path)
    assert doc.kind == "pdf"
    assert doc.title == "Annual Report"
    assert doc.source == str(path)
    assert doc.doc_id == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [s.locator for s in doc.sections] == ["p1", "p2", "p3"]
    assert [s.metadata["page"] for s in doc.sections] == [1, 2, 3]
    for n, section in enumerate(doc.sections, start=1):
        assert section.text == f"Page {n} talks about topic number {n}. It has a second sentence."
    assert doc.warnings == ()


def test_blank_pages_are_skipped_without_renumbering(make_pdf: PdfFactory) -> None:
    [doc] = PdfLoader().load(make_pdf(["first page", None, "third page"]))
    assert [(s.locator, s.metadata["page"], s.text) for s in doc.sections] == [
        ("p1", 1, "first page"),
        ("p3", 3, "third page"),
    ]


def test_title_falls_back_to_file_stem(make_pdf: PdfFactory) -> None:
    [doc] = PdfLoader().load(make_pdf(["hello"], name="quarterly-notes.pdf"))
    assert doc.title == "quarterly-notes"


def test_pdf_without_text_warns_and_has_no_sections(
    make_pdf: PdfFactory, caplog: pytest.LogCaptureFixture
) -> None:
    path = make_pdf([None, None], name="scan.pdf")
    with caplog.at_level(logging.WARNING, logger="ragchat.ingest.pdf"):
        [doc] = PdfLoader().load(path)
    assert doc.sections == ()
    assert doc.warnings == (NO_TEXT_WARNING,)
    assert any("scan.pdf" in r.getMessage() and "OCR" in r.getMessage() for r in caplog.records)


def test_truncated_pdf_raises_naming_the_file(make_pdf: PdfFactory) -> None:
    path = make_pdf(["some text " * 50, "more text " * 50, "end " * 50])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IngestError) as info:
        PdfLoader().load(path)
    assert info.value.source == str(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "content", [b"", b"%PDF-1.7\nthis is not really a pdf\n%%EOF\n", b"plain text\n%%EOF"]
)
def test_empty_or_corrupt_pdf_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(content)
    with pytest.raises(IngestError) as info:
        PdfLoader().load(path)
    assert info.value.source == str(path)


def test_password_protected_pdf_raises_clear_error(make_pdf: PdfFactory) -> None:
    path = make_pdf(["secret"], user_password="pw")
    with pytest.raises(IngestError, match=r"encrypted PDF.*password"):
        PdfLoader().load(path)


def test_owner_password_only_pdf_is_read(make_pdf: PdfFactory) -> None:
    [doc] = PdfLoader().load(make_pdf(["readable by anyone"], owner_password="owner"))
    assert [s.text for s in doc.sections] == ["readable by anyone"]


def test_missing_file_raises_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="cannot read"):
        PdfLoader().load(tmp_path / "nope.pdf")
