"""Fixture files are built at test time so every case documents exactly what it feeds in."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


# -- crafted PDFs: hostile files a few KB long, written byte by byte -------------------------
def raw_pdf(objects: dict[int, bytes]) -> bytes:
    """A PDF of these numbered objects (1 = the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets: dict[int, int] = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref, size = len(out), max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num] if num in offsets else b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    return bytes(out)


def flate_stream(chunks: Iterator[bytes]) -> bytes:
    """A FlateDecode stream object of the concatenated chunks (compressed as they come, so a
    bomb of hundreds of MB is never held in memory)."""
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(c) for c in chunks) + packer.flush()
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def one_page_pdf(contents: bytes, extra_resources: bytes = b"") -> bytes:
    """One page whose content stream object is ``contents``."""
    return raw_pdf(
        {
            1: b"<< /Type /Catalog /Pages 2 0 R >>",
            2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> " + extra_resources + b">> >>",
            4: contents,
            5: FONT,
        }
    )


def endless_text_pdf(operators: int = 3_000_000) -> bytes:
    """~30 KB whose one page draws millions of text runs: extracting them takes minutes."""
    body = (b"(word ) Tj " * 1000 for _ in range(operators // 1000))
    return one_page_pdf(flate_stream(iter([b"BT /F1 12 Tf ", *body, b" ET"])))


def bomb_pdf(megabytes: int = 600) -> bytes:
    """~600 KB whose page content inflates to ``megabytes`` MB of zeros."""
    zeros = b"\0" * 1024 * 1024
    return one_page_pdf(flate_stream(zeros for _ in range(megabytes)))


def nested_pdf(depth: int = 200_000) -> bytes:
    """A page whose content stream shows an array nested ``depth`` levels deep."""
    nest = b"[" * depth + b"]" * depth
    return one_page_pdf(flate_stream(iter([b"BT /F1 12 Tf (hello) Tj ", nest, b" TJ ET"])))


def fractal_pdf(fanout: int = 10, depth: int = 5) -> bytes:
    """A page tree whose every node lists the next one ``fanout`` times: a few hundred bytes
    that claim fanout**depth pages."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>"}
    for level in range(depth):
        num, kid = 2 + level, 3 + level
        kids = b" ".join([b"%d 0 R" % kid] * fanout)
        parent = b"" if level == 0 else b"/Parent %d 0 R " % (num - 1)
        objects[num] = b"<< /Type /Pages %s/Kids [%s] /Count %d >>" % (
            parent,
            kids,
            fanout ** (depth - level),
        )
    leaf = 2 + depth
    objects[leaf] = (
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (leaf - 1, leaf + 1, leaf + 2)
    )
    objects[leaf + 1] = flate_stream(iter([b"BT /F1 12 Tf (page) Tj ET"]))
    objects[leaf + 2] = FONT
    return raw_pdf(objects)


def shared_stream_pdf(pages: int = 20, megabytes: int = 6) -> bytes:
    """~20 KB whose ``pages`` pages all draw one content stream of ``megabytes`` MB of text
    runs: each page costs seconds to extract, a flat parse limit of minutes is all used."""
    runs = megabytes * 1024 * 1024 // (11 * 1000)
    body = (b"(word ) Tj " * 1000 for _ in range(runs))
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(pages))
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        3: flate_stream(iter([b"BT /F1 12 Tf ", *body, b" ET"])),
        4: FONT,
    }
    for i in range(pages):
        objects[5 + i] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>"
        )
    return raw_pdf(objects)


@dataclass(frozen=True)
class Crafted:
    """The crafted-PDF builders above, for test modules (a fixture: conftest is no module)."""

    endless_text: Callable[..., bytes] = endless_text_pdf
    bomb: Callable[..., bytes] = bomb_pdf
    nested: Callable[..., bytes] = nested_pdf
    fractal: Callable[..., bytes] = fractal_pdf
    shared_stream: Callable[..., bytes] = shared_stream_pdf


@pytest.fixture(scope="session")
def crafted() -> Crafted:
    return Crafted()
