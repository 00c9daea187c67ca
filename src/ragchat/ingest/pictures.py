"""Text in pictures inside documents: a screenshot of a table pasted into a Word file, a
photographed notice on a slide, a scanned figure on a PDF page that also has a text layer.

Each picture large enough to hold a line of text is read by OCR (``ingest.ocr``) in the same
parse sandbox, under the same limits, and kept only when what OCR read is words (a photo of a
beach gives "| ~ a8 ;"). The citation stays where the picture is: the section, the slide, the
page. At most ``MAX_PICTURES`` pictures a document are read (the largest first is not known
in a stream, so the first ones), and a picture repeated (a logo on every slide) once.
"""

from __future__ import annotations

import hashlib
import io
import re
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.ocr import (
    MAX_PIXELS,
    OcrPage,
    check_pixels,
    read_image,
    stated_dpi,
    tesseract,
)

MAX_PICTURES = 40
MIN_WIDTH, MIN_HEIGHT = 120, 40  # pixels: smaller pictures are icons and bullets
MIN_WORDS = 3
_WORD = re.compile(r"[A-Za-z]{2,}")


class Pictures:
    """Reads the pictures of one document; remembers which it has read."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.command = tesseract()
        self.read = 0
        self.seen: set[str] = set()
        self.skipped = 0  # pictures over MAX_PICTURES

    def from_bytes(self, blob: bytes) -> OcrPage | None:
        """The text of an encoded picture (PNG, JPEG, ...), None when it holds none or OCR is
        not installed."""
        if self.command is None or not self._new(blob):
            return None
        from PIL import Image, ImageOps, UnidentifiedImageError

        Image.MAX_IMAGE_PIXELS = MAX_PIXELS
        try:
            with Image.open(io.BytesIO(blob)) as image:
                if not self._fits(*image.size):
                    return None
                frame = ImageOps.exif_transpose(image).convert("L")
                dpi = stated_dpi(image.info.get("dpi"))
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
            return None  # a picture that is no image (a WMF, a damaged one): nothing to read
        except Image.DecompressionBombError:
            return None
        return self._ocr(frame, dpi)

    def from_image(self, image: Any, key: bytes) -> OcrPage | None:
        """The text of a decoded picture (a PDF page's image); ``key`` tells repeats apart."""
        if self.command is None or not self._new(key) or not self._fits(*image.size):
            return None
        return self._ocr(image.convert("L"), None)

    def may_hold_text(self, width: int, height: int) -> bool:
        """Whether a picture of this size is worth decoding: large enough for a line of text,
        not over ``MAX_PIXELS``, and within the document's ``MAX_PICTURES``."""
        if self.command is None or width < MIN_WIDTH or height < MIN_HEIGHT:
            return False
        if width * height > MAX_PIXELS:
            return False
        if self.read >= MAX_PICTURES:
            self.skipped += 1
            return False
        return True

    def _new(self, key: bytes) -> bool:
        digest = hashlib.sha256(key).hexdigest()
        if digest in self.seen:
            return False
        self.seen.add(digest)
        return True

    def _fits(self, width: int, height: int) -> bool:
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            return False
        try:
            check_pixels(width, height, self.source)
        except IngestError:
            return False
        if self.read >= MAX_PICTURES:
            self.skipped += 1
            return False
        self.read += 1
        return True

    def _ocr(self, image: Any, dpi: int | None) -> OcrPage | None:
        assert self.command is not None
        page = read_image(image, self.source, self.command, dpi)
        words = _WORD.findall(page.text) + [
            w for t in page.tables for row in t.rows for c in row for w in _WORD.findall(c)
        ]
        if len(words) < MIN_WORDS or not _mostly_words(words):
            return None
        return page

    def warnings(self) -> tuple[str, ...]:
        if not self.skipped:
            return ()
        return (f"{self.skipped} picture(s) past the first {MAX_PICTURES} were not read by OCR",)


def _mostly_words(words: list[str]) -> bool:
    """At least half of what OCR read are words of the language (noise reads as fragments)."""
    from wordfreq import word_frequency

    known = sum(1 for w in words if word_frequency(w.lower(), "en") > 0)
    return known >= max(MIN_WORDS, len(words) / 2)


def page_lines(page: OcrPage) -> list[str]:
    """A picture's prose and form lines, in reading order (its tables go separately)."""
    lines = [page.text] if page.text else []
    lines += [f"{a}: {b}" for t in page.tables if t.pairs for a, b in t.rows]
    return lines


def page_tables(page: OcrPage) -> list[list[list[str]]]:
    return [t.rows for t in page.tables if not t.pairs and len(t.rows) >= 2]
