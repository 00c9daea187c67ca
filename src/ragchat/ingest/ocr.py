"""OCR with Debian's ``tesseract-ocr`` for scanned PDF pages and images of pages.

Tesseract runs as a command (what pytesseract would do for us, minus a dependency), one page
at a time, single-threaded (``OMP_THREAD_LIMIT=1``: the ingestion worker and the server share
two cores). PDF pages are rendered by pdfium (the ``pypdfium2`` wheel ships it), only those
without a text layer. Every image is bounded by ``MAX_PIXELS`` before it is decoded: a PNG of
30,000 x 30,000 pixels is a few hundred KB on disk and 900 MB in memory.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING

from ragchat.errors import IngestError

if TYPE_CHECKING:  # Pillow and pdfium are imported when a scan is read
    from PIL import Image

# 40 Mpx: an A3 page at 300 dpi is 17.4 Mpx; Pillow's own bomb limit is 89 Mpx.
MAX_PIXELS = 40_000_000
OCR_DPI = 300
PAGE_TIMEOUT_S = 120.0
LANGUAGE = "eng"
MISSING = "OCR needs Debian's tesseract-ocr and tesseract-ocr-eng (scripts/ocr-deps installs them)"


@cache
def tesseract() -> str | None:
    """The tesseract command, or None when it (or its English data) is not installed."""
    found = shutil.which("tesseract")
    if found is None:
        return None
    return found if _has_language(found) else None


def _has_language(command: str) -> bool:
    try:
        out = subprocess.run(
            [command, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return LANGUAGE in out.stdout.split()


def check_pixels(width: int, height: int, source: str) -> None:
    if width * height > MAX_PIXELS:
        raise IngestError(
            source,
            f"image too large: {width:,} x {height:,} pixels "
            f"(at most {MAX_PIXELS / 1e6:.0f} million)",
        )


def ocr_image(image: Image.Image, source: str, command: str) -> str:
    """The text tesseract reads in ``image`` (grayscale PNG over a pipe)."""
    buf = io.BytesIO()
    image.convert("L").save(buf, format="PNG")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            [command, "stdin", "stdout", "-l", LANGUAGE, "--psm", "3"],
            input=buf.getvalue(),
            capture_output=True,
            timeout=PAGE_TIMEOUT_S,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise IngestError(source, f"OCR of one page took longer than {PAGE_TIMEOUT_S:g} s") from exc
    except OSError as exc:
        raise IngestError(source, f"cannot run tesseract ({exc})") from exc
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise IngestError(source, f"tesseract failed ({err[-1] if err else done.returncode})")
    return done.stdout.decode("utf-8", "replace")


def render_pages(
    data: bytes, pages: Sequence[int], source: str
) -> Iterator[tuple[int, Image.Image]]:
    """Pages (1-based) of a PDF as grayscale images at ``OCR_DPI``, scaled down to fit
    ``MAX_PIXELS`` (a page can claim to be metres wide)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise IngestError(source, f"cannot render the PDF for OCR ({exc})") from exc
    try:
        for number in pages:
            page = pdf[number - 1]
            try:
                width, height = page.get_size()
                scale = OCR_DPI / 72
                area = width * height * scale * scale
                if area > MAX_PIXELS:
                    scale *= (MAX_PIXELS / area) ** 0.5
                bitmap = page.render(scale=scale, grayscale=True)
                yield number, bitmap.to_pil()
            finally:
                page.close()
    finally:
        pdf.close()
