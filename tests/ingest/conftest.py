"""Fixture files are built at test time so every case documents exactly what it feeds in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fpdf import FPDF

PdfFactory = Callable[..., Path]


@pytest.fixture
def make_pdf(tmp_path: Path) -> PdfFactory:
    """Writes a PDF whose pages hold the given texts (``None`` = a page with only a drawing)."""

    def build(
        pages: list[str | None],
        name: str = "doc.pdf",
        title: str | None = None,
        user_password: str | None = None,
        owner_password: str | None = None,
    ) -> Path:
        pdf = FPDF()
        if title:
            pdf.set_title(title)
        pdf.set_font("Helvetica", size=11)
        for text in pages:
            pdf.add_page()
            if text is None:
                pdf.rect(20, 20, 100, 60, style="F")
            else:
                pdf.multi_cell(0, 6, text)
        if owner_password or user_password:
            pdf.set_encryption(
                owner_password=owner_password or "owner", user_password=user_password
            )
        path = tmp_path / name
        path.write_bytes(bytes(pdf.output()))
        return path

    return build
