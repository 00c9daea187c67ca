"""A scanned page's pixels made ready for OCR: straightened, specks of dust wiped, and the
horizontal rules it draws found (a ruled table's rows end there). numpy and scipy on the
grayscale image; each step is a pass or two over the pixels."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image


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
