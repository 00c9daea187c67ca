"""Images of pages (a phone photo of a letter, a scanned form): OCR'd, one page per image.

A PNG or JPEG is one page; a TIFF may hold several (a scanner's multi-page output), each its
own page. The size is checked from the header before any pixel is decoded (``ocr.MAX_PIXELS``).
"""

from __future__ import annotations

import re
from pathlib import Path

from ragchat.errors import IngestError
from ragchat.ingest.ocr import (
    MAX_PIXELS,
    MISSING,
    OcrPage,
    check_pixels,
    page_sections,
    read_image,
    stated_dpi,
    tesseract,
)
from ragchat.ingest.ocr_clean import drop_running_heads
from ragchat.ingest.text_utils import read_bytes, sha256_hex, too_much_text
from ragchat.types import LoadedDocument

MAX_FRAMES = 500


class ImageLoader:
    suffixes: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".tif", ".tiff")

    def __init__(self, max_chars: int | None = None, max_pages: int | None = None) -> None:
        self.max_chars = max_chars
        self.max_pages = max_pages or MAX_FRAMES

    def load(self, path: Path) -> list[LoadedDocument]:
        from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

        source = str(path)
        data = read_bytes(path)
        command = tesseract()
        if command is None:
            raise IngestError(source, f"an image is read by OCR, which is not installed: {MISSING}")
        Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow refuses larger images when it opens them
        try:
            with Image.open(path) as image:
                check_pixels(*image.size, source)
                frames = getattr(image, "n_frames", 1)
                if frames > self.max_pages:
                    raise IngestError(
                        source, f"too many pages ({frames}; at most {self.max_pages} per image)"
                    )
                read: list[OcrPage] = []
                chars = 0
                for frame in ImageSequence.Iterator(image):
                    check_pixels(*frame.size, source)
                    page = read_image(
                        ImageOps.exif_transpose(frame),
                        source,
                        command,
                        stated_dpi(frame.info.get("dpi")),
                    )
                    chars += len(page.text) + sum(
                        len(c) for t in page.tables for row in t.rows for c in row
                    )
                    if self.max_chars and chars > self.max_chars:
                        raise IngestError(source, too_much_text(self.max_chars))
                    read.append(page)
                texts = drop_running_heads([p.text for p in read])
                sections = [
                    s
                    for number, (page, text) in enumerate(zip(read, texts, strict=True), start=1)
                    for s in page_sections(page, text, number)
                ]
        except Image.DecompressionBombError as exc:  # over twice ocr.MAX_PIXELS
            pixels = re.search(r"\((\d+) pixels\)", str(exc))
            size = f"{int(pixels.group(1)):,} pixels" if pixels else "too many pixels"
            raise IngestError(
                source, f"image too large: {size} (at most {MAX_PIXELS / 1e6:.0f} million)"
            ) from exc
        except UnidentifiedImageError as exc:
            raise IngestError(source, "not a readable image (unknown or damaged format)") from exc
        except (OSError, SyntaxError, ValueError) as exc:  # Pillow's errors on damaged data
            raise IngestError(source, f"damaged image ({type(exc).__name__}: {exc})") from exc
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="image",
                title=path.stem,
                sections=tuple(sections),
                metadata={"title": path.stem, "pages": frames, "ocr": True},
                warnings=() if sections else ("OCR found no text in the image",),
            )
        ]
