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
from ragchat.ingest.pdf_tables import heading_above
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
    for table in tables:
        _reread_codes(gray, table, source, command, dpi)
        _agree_codes(table)
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


# Characters OCR takes for one another in a short code ("Fl" for F1, "FS" for F5, "Fo" for F6)
_CONFUSED = {
    frozenset(p) for p in ("l1", "I1", "|1", "S5", "s5", "o6", "O0", "o0", "B8", "Z2", "G6")
}
_CODE_CHARS = 4  # a cell of at most this many characters, letters and digits, is a code


def _reread_codes(
    image: Image.Image, table: Table, source: str, command: str, dpi: int | None
) -> None:
    """Short codes in a table's cells read again, larger: tesseract reads "F5" alone in a cell
    as "FS" at 200 dpi but right at twice the size. All such cells of a table go in one strip
    (one tesseract run); a cell changes only where the new reading has more digits and differs
    only by characters OCR confuses (l/1, S/5, O/0...) — never to a new word."""
    from PIL import Image as PILImage

    short = [
        (r, c, cell[0])
        for r, row in enumerate(table.cells)
        for c, cell in enumerate(row)
        if len(cell) == 1 and 2 <= len(cell[0].text) <= _CODE_CHARS and cell[0].text.isalnum()
    ]
    if not short:
        return
    pad = 6
    crops = [
        image.crop((int(w.x0) - pad, int(w.y0) - pad, int(w.x1) + pad, int(w.y1) + pad))
        for _, _, w in short
    ]
    width = max(c.width for c in crops) + 4 * pad
    height = sum(c.height + 3 * pad for c in crops) + 2 * pad
    strip = PILImage.new("L", (width, height), 255)
    y = 2 * pad
    for crop in crops:
        strip.paste(crop, (2 * pad, y))
        y += crop.height + 3 * pad
    big = strip.resize((width * 2, height * 2), PILImage.Resampling.LANCZOS)
    args_dpi = dpi * 2 if dpi else None
    lines = [ln.strip() for ln in _run(big, source, command, args_dpi, "txt", psm=6).splitlines()]
    lines = [ln for ln in lines if ln]
    if len(lines) != len(short):
        return
    for (r, c, word), new in zip(short, lines, strict=True):
        old = word.text
        more_digits = sum(ch.isdigit() for ch in new) > sum(ch.isdigit() for ch in old)
        if (
            more_digits
            and len(new) == len(old)
            and all(a == b or frozenset((a, b)) in _CONFUSED for a, b in zip(old, new, strict=True))
        ):
            table.rows[r][c] = new


_AS_DIGIT = {"l": "1", "I": "1", "O": "0", "S": "5", "B": "8", "Z": "2", "G": "6"}


def _agree_codes(table: Table) -> None:
    """A column of codes (E01, E02 ...) read the way most of its cells are: a letter where the
    others have a digit is the digit it looks like ("EO1" → "E01"), and a full stop after a
    code that the others lack is a speck ("E02." → "E02")."""
    for col in range(max((len(r) for r in table.rows[1:]), default=0)):
        cells = [(i, r[col]) for i, r in enumerate(table.rows) if i and col < len(r)]
        codes = [(i, c.rstrip(".")) for i, c in cells if 2 <= len(c.rstrip(".")) <= _CODE_CHARS]
        codes = [(i, c) for i, c in codes if c.isalnum()]
        if len(codes) < 3 or len(codes) < 0.8 * len(cells):
            continue
        dotted = sum(c.endswith(".") for _, c in cells)
        for i, code in codes:
            if dotted <= 1:
                table.rows[i][col] = code
        size = max(set(len(c) for _, c in codes), key=[len(c) for _, c in codes].count)
        same = [(i, c) for i, c in codes if len(c) == size]
        for pos in range(size):
            if sum(c[pos].isdigit() for _, c in same) < 0.6 * len(same):
                continue
            for i, _ in same:
                cell = table.rows[i][col]
                digit = _AS_DIGIT.get(cell[pos])
                if digit:
                    table.rows[i][col] = cell[:pos] + digit + cell[pos + 1 :]


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


def despeckle(image: Image.Image, dpi: int | None) -> Image.Image:
    """Wipes specks of ink far from any letter (dust, scanner noise): tesseract reads them as
    full stops and commas that cut sentences. A speck next to a word is left to the text
    cleaning, where a stop can be judged by what follows it."""
    import numpy as np
    from scipy import ndimage

    arr = np.asarray(image)
    ink = arr < min(160, int(arr.mean()) - 40)
    labels, count = ndimage.label(ink, structure=np.ones((3, 3), dtype=bool))
    if count == 0:
        return image
    sizes = np.bincount(labels.ravel())
    scale = (dpi or 200) / 200
    small = sizes <= max(4, int(20 * scale * scale))
    small[0] = False
    if not small.any():
        return image
    big = ink & ~small[labels]
    reach = max(3, int(14 * scale))
    near = ndimage.maximum_filter(big.astype(np.uint8), size=2 * reach + 1).astype(bool)
    lone = small[labels] & ~near
    if not lone.any():
        return image
    out = arr.copy()
    out[lone] = 255
    from PIL import Image as PILImage

    return PILImage.fromarray(out, "L")


def deskew(image: Image.Image, max_degrees: float = 4.0) -> Image.Image:
    """The page turned straight: a scan fed in at 1-2 degrees puts a form's label and its
    value, or a table's cells, on different lines of boxes. The angle is the one whose rows of
    ink are most uneven (text lines against the gaps between them), on a small copy."""
    import numpy as np
    from PIL import Image as PILImage

    small = image.copy()
    small.thumbnail((800, 800))
    ink = PILImage.fromarray(((np.asarray(small) < 128) * 255).astype(np.uint8), "L")
    best, best_score = 0.0, -1.0
    steps = int(max_degrees / 0.25)
    for k in range(-steps, steps + 1):
        angle = k * 0.25
        rows = np.asarray(ink.rotate(angle, resample=PILImage.Resampling.NEAREST)).sum(axis=1)
        score = float(np.var(rows))
        if score > best_score:
            best, best_score = angle, score
    if abs(best) < 0.5:
        return image
    return image.rotate(best, resample=PILImage.Resampling.BICUBIC, fillcolor=255)


def horizontal_rules(image: Image.Image) -> list[float]:
    """The y of horizontal lines drawn on the page (a ruled table's rows end there): rows of
    pixels dark over a long run."""
    import numpy as np

    arr = np.asarray(image) < 128
    if arr.size == 0:
        return []
    width = arr.shape[1]
    # A rule is dark over at least a fifth of the page's width, with few breaks.
    runs = arr.sum(axis=1)
    rows = np.flatnonzero(runs >= width / 5)
    rules: list[float] = []
    for y in rows:
        line = arr[y]
        start = int(np.argmax(line))
        end = width - int(np.argmax(line[::-1]))
        if line[start:end].mean() > 0.8 and (not rules or y - rules[-1] > 2):
            rules.append(float(y))
    return rules


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
