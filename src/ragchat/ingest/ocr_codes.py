"""Short codes in the cells of a scanned table (E01, F5, HT-10), read right: tesseract takes
"F5" alone in a cell for "FS" at 200 dpi, and "E01" for "EO1" now and then. Two remedies, both
kept to changes that turn a letter into the digit it looks like."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ragchat.ingest.layout import Table

if TYPE_CHECKING:
    from PIL import Image

# Reads an image (its resolution when known) as plain text with tesseract's --psm 6.
Reader = Callable[["Image.Image", "int | None"], str]

# Characters OCR takes for one another in a short code ("Fl" for F1, "FS" for F5, "Fo" for F6)
_CONFUSED = {
    frozenset(p) for p in ("l1", "I1", "|1", "S5", "s5", "o6", "O0", "o0", "B8", "Z2", "G6")
}
_CODE_CHARS = 4  # a cell of at most this many characters, letters and digits, is a code


def reread_codes(image: Image.Image, table: Table, read: Reader, dpi: int | None) -> None:
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
    lines = [ln.strip() for ln in read(big, args_dpi).splitlines()]
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


def agree_codes(table: Table) -> None:
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
