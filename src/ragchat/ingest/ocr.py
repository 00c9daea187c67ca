"""OCR with Debian's ``tesseract-ocr`` for scanned PDF pages, images of pages and pictures in
documents.

Tesseract runs as a command (what pytesseract would do for us, minus a dependency), one image
at a time, single-threaded (``OMP_THREAD_LIMIT=1``: the ingestion worker and the server share
two cores), and is told the image's resolution. A scanned PDF page is rendered at the
resolution of the image it holds (a 200 dpi scan at 200 dpi: resampling it to 300 dpi made
letters up), only pages without a text layer. Before tesseract, specks of dust far from any
letter are wiped; after it, words come back with their boxes (``tsv``), so tables are found
from where the words sit (``ingest.layout``), and the text is cleaned of what OCR leaves
(``ingest.ocr_clean``). Every image is bounded by ``MAX_PIXELS`` before it is decoded: a PNG
of 30,000 x 30,000 pixels is a few hundred KB on disk and 900 MB in memory.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from ragchat.errors import IngestError
from ragchat.ingest.layout import Table, Word, find_tables, is_rule
from ragchat.ingest.ocr_clean import clean_ocr_text
from ragchat.ingest.ocr_codes import agree_codes, reread_codes
from ragchat.ingest.pdf_tables import heading_above
from ragchat.ingest.scan import deskew, despeckle, horizontal_rules
from ragchat.ingest.tables import table_section
from ragchat.ingest.text_utils import normalize_ws
from ragchat.types import Section

if TYPE_CHECKING:  # Pillow and pdfium are imported when a scan is read
    from PIL import Image

# 40 Mpx: an A3 page at 300 dpi is 17.4 Mpx; Pillow's own bomb limit is 89 Mpx.
MAX_PIXELS = 40_000_000
OCR_DPI = 300  # pages drawn without an image (text as outlines): rendered at this resolution
MIN_DPI, MAX_DPI = 70, 600  # a page image's own resolution is used within these
PAGE_TIMEOUT_S = 120.0
LANGUAGE = "eng"
MISSING = "OCR needs Debian's tesseract-ocr and tesseract-ocr-eng (scripts/ocr-deps installs them)"
_MIN_CONF = 30.0  # words below this confidence that hold no letter or digit are specks


@dataclass(frozen=True)
class OcrPage:
    """What OCR read on one image: its prose (cleaned, in tesseract's reading order) and its
    tables (rows of cell texts, the first naming the columns)."""

    text: str
    tables: list[Table] = field(default_factory=list)


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


def stated_dpi(value: Any) -> int | None:
    """The resolution an image file says it was scanned at (Pillow's ``info["dpi"]``), when
    it says a plausible one."""
    try:
        dpi = round(float(value[0])) if value else 0
    except (TypeError, ValueError, IndexError):
        return None
    return dpi if MIN_DPI <= dpi <= 1200 else None


def check_pixels(width: int, height: int, source: str) -> None:
    if width * height > MAX_PIXELS:
        raise IngestError(
            source,
            f"image too large: {width:,} x {height:,} pixels "
            f"(at most {MAX_PIXELS / 1e6:.0f} million)",
        )


def _run(
    image: Image.Image, source: str, command: str, dpi: int | None, fmt: str, psm: int = 3
) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    args = [command, "stdin", "stdout", "-l", LANGUAGE, "--psm", str(psm)]
    if dpi:
        args += ["--dpi", str(dpi)]
    if fmt != "txt":
        args.append(fmt)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            args,
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


def ocr_image(image: Image.Image, source: str, command: str, dpi: int | None = None) -> str:
    """The plain text tesseract reads in ``image``, as it comes (no cleaning)."""
    return _run(image.convert("L"), source, command, dpi, "txt")


def read_image(image: Image.Image, source: str, command: str, dpi: int | None = None) -> OcrPage:
    """``image`` read as a page: specks wiped, words with their boxes, tables found, prose
    cleaned. ``dpi`` is the image's resolution when known (tesseract guesses otherwise)."""
    gray = despeckle(deskew(image.convert("L")), dpi)
    words, lines = _parse_tsv(_run(gray, source, command, dpi, "tsv"))
    tables = find_tables(words, rules=horizontal_rules(gray))

    def read(strip: Image.Image, at: int | None) -> str:
        return _run(strip, source, command, at, "txt", psm=6)

    for table in tables:
        reread_codes(gray, table, read, dpi)
        agree_codes(table)
    taken: set[int] = set().union(*(t.words for t in tables)) if tables else set()
    paragraphs: list[str] = []
    for para in lines:
        kept = [
            " ".join(w.text for w in line if id(w) not in taken and not is_rule(w.text))
            for line in para
        ]
        text = "\n".join(k for k in kept if k)
        if text:
            paragraphs.append(text)
    return OcrPage(clean_ocr_text("\n\n".join(paragraphs)), tables)


def _parse_tsv(tsv: str) -> tuple[list[Word], list[list[list[Word]]]]:
    """Words (boxes in pixels) and, in tesseract's reading order, paragraphs of lines."""
    words: list[Word] = []
    paragraphs: list[list[list[Word]]] = []
    keys: tuple[int, int] | None = None
    line_key: int | None = None
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = cols[11].strip()
        try:
            block, par, line = int(cols[2]), int(cols[3]), int(cols[4])
            left, top, width, height = (int(c) for c in cols[6:10])
            conf = float(cols[10])
        except ValueError:
            continue
        if not text or (conf < _MIN_CONF and not any(ch.isalnum() for ch in text)):
            continue
        word = Word(text, left, top, left + width, top + height, len(words))
        words.append(word)
        if keys != (block, par):
            paragraphs.append([])
            keys, line_key = (block, par), None
        if line_key != line:
            paragraphs[-1].append([])
            line_key = line
        paragraphs[-1][-1].append(word)
    return words, paragraphs


def page_dpi(page: Any, fallback: int = OCR_DPI) -> int:
    """The resolution of the image a scanned page holds (the largest, when it covers a good
    part of the page), else ``fallback``."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    best = 0.0
    dpi = 0.0
    try:
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
            left, bottom, right, top = obj.get_bounds()
            area = (right - left) * (top - bottom)
            if area > best and right > left:
                px_w, _px_h = obj.get_px_size()
                best, dpi = area, px_w / ((right - left) / 72)
    except Exception:  # pdfium on a damaged page: render at the fallback
        return fallback
    if best < 0.3 * width * height or not dpi:
        return fallback
    return round(min(MAX_DPI, max(MIN_DPI, dpi)))


def render_pages(
    data: bytes, pages: Sequence[int], source: str
) -> Iterator[tuple[int, Image.Image, int]]:
    """Pages (1-based) of a PDF as grayscale images at their own resolution (``page_dpi``),
    scaled down to fit ``MAX_PIXELS`` (a page can claim to be metres wide), with that dpi."""
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
                dpi = page_dpi(page)
                scale = dpi / 72
                area = width * height * scale * scale
                if area > MAX_PIXELS:
                    scale *= (MAX_PIXELS / area) ** 0.5
                bitmap = page.render(scale=scale, grayscale=True)
                yield number, bitmap.to_pil(), round(scale * 72)
            finally:
                page.close()
    finally:
        pdf.close()


def page_sections(page: OcrPage, text: str, number: int) -> list[Section]:
    """An OCR'd page as sections cited by its page: its prose (``text``, cleaned), a form's
    label/value lines with it, and each table as rows naming their columns."""
    meta = {"page": number, "ocr": True}
    lines = [text] if text else []
    tables: list[Section] = []
    for table in page.tables:
        if table.pairs:
            lines += [f"{label}: {value}" for label, value in table.rows]
            continue
        heading = heading_above([ln for ln in text.split("\n")[:3] if ln.strip()][:1])
        section = table_section(
            table.rows[0],
            table.rows[1:],
            locator=f"p{number}.t{len(tables) + 1}",
            metadata={**meta, "heading": heading} if heading else meta,
        )
        if section is not None:
            tables.append(section)
    prose = normalize_ws("\n".join(lines))
    head = [Section(text=prose, locator=f"p{number}", metadata=meta)] if prose else []
    return head + tables
