"""PDF loader: one section per page so every chunk can cite its exact page.

Pages without a text layer (scans) are read by OCR (``ingest.ocr``) when tesseract is
installed; their citation is still the page. A table on a page, on the text layer
(``ingest.pdf_tables``) or in a scan (``ingest.layout``), becomes a section of its own of row
lines naming their columns (``ingest.tables``), cited by the same page.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

from ragchat.errors import IngestError
from ragchat.ingest import ocr
from ragchat.ingest.ocr_clean import drop_running_heads
from ragchat.ingest.pdf_tables import find_pdf_tables
from ragchat.ingest.pictures import Pictures, page_lines, page_tables
from ragchat.ingest.tables import table_section
from ragchat.ingest.text_utils import normalize_ws, read_bytes, sha256_hex, too_much_text
from ragchat.types import LoadedDocument, Section

logger = logging.getLogger(__name__)

NO_TEXT_WARNING = "no extractable text (scanned PDF?) — OCR it first"
# The PDF spec puts %%EOF on the last line; tolerate a little trailing junk.
_EOF_WINDOW = 4096
# A page with fewer characters than this has no real text layer (a scan with a stamped
# page number or a blank line): it is OCR'd.
_MIN_PAGE_CHARS = 10


class PdfLoader:
    """``max_pages`` / ``max_chars`` (None = no limit) refuse a file as soon as it is known to
    be over: a crafted PDF with a million pages, or pages expanding to hundreds of MB of text,
    fails early instead of after extracting everything."""

    suffixes: tuple[str, ...] = (".pdf",)

    def __init__(self, max_pages: int | None = None, max_chars: int | None = None) -> None:
        self.max_pages = max_pages
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        if not data:
            raise IngestError(source, "empty file, not a PDF")
        if b"%%EOF" not in data.rstrip(b"\x00\r\n\t ")[-_EOF_WINDOW:]:
            # pypdf can half-recover a truncated file and silently drop pages; refuse instead.
            raise IngestError(source, "truncated or corrupt PDF (no %%EOF marker at the end)")
        try:
            reader = PdfReader(io.BytesIO(data))
            self._decrypt(reader, source)
            title = self._title(reader) or path.stem
            sections: list[Section] = []
            pages = len(reader.pages)
            if self.max_pages and pages > self.max_pages:
                raise IngestError(
                    source, f"too many pages ({pages}; at most {self.max_pages} per PDF)"
                )
            chars = 0
            scanned: list[int] = []
            for number, page in enumerate(reader.pages, start=1):
                text = normalize_ws(page.extract_text() or "")
                chars += len(text)
                if self.max_chars and chars > self.max_chars:
                    raise IngestError(source, too_much_text(self.max_chars))
                if len(text.replace(" ", "")) < _MIN_PAGE_CHARS:
                    scanned.append(number)
                if text:
                    sections.append(
                        Section(text=text, locator=f"p{number}", metadata={"page": number})
                    )
            page_count = pages
        except IngestError:
            raise
        except RecursionError as exc:
            raise IngestError(source, "corrupt PDF (objects nested too deeply)") from exc
        except FileNotDecryptedError as exc:
            raise IngestError(source, "encrypted PDF: a password is required") from exc
        except Exception as exc:  # pypdf raises many types on malformed input
            raise IngestError(source, f"corrupt PDF ({type(exc).__name__}: {exc})") from exc

        warnings: tuple[str, ...] = ()
        sections = self._tables(data, sections, scanned)
        sections, picture_notes = _pictures(data, source, sections, scanned)
        warnings += picture_notes
        if scanned:
            sections, warnings = self._ocr(data, source, sections, scanned, chars)
        if not sections:
            logger.warning("%s: %s", source, NO_TEXT_WARNING)
            warnings = (*warnings, NO_TEXT_WARNING)
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="pdf",
                title=title,
                sections=tuple(sections),
                metadata={"title": title, "pages": page_count},
                warnings=warnings,
            )
        ]

    def _ocr(
        self, data: bytes, source: str, sections: list[Section], pages: list[int], chars: int
    ) -> tuple[list[Section], tuple[str, ...]]:
        """OCRs ``pages`` (those without a text layer); keeps a page's own text when OCR
        reads less."""
        command = ocr.tesseract()
        if command is None:
            listed = ", ".join(map(str, pages[:10])) + (" ..." if len(pages) > 10 else "")
            return sections, (
                f"{len(pages)} page(s) without a text layer ({listed}) were not "
                f"read: {ocr.MISSING}",
            )
        by_page: dict[int, list[Section]] = {}
        for section in sections:
            by_page.setdefault(section.metadata["page"], []).append(section)
        read: dict[int, ocr.OcrPage] = {}
        for number, image, dpi in ocr.render_pages(data, pages, source):
            page = ocr.read_image(image, source, command, dpi)
            old = sum(len(s.text) for s in by_page.get(number, []))
            new = len(page.text) + sum(len(r) for t in page.tables for row in t.rows for r in row)
            if new <= old:
                continue
            chars += new - old
            if self.max_chars and chars > self.max_chars:
                raise IngestError(source, too_much_text(self.max_chars))
            read[number] = page
        texts = drop_running_heads([read[n].text for n in sorted(read)])
        for number, text in zip(sorted(read), texts, strict=True):
            by_page[number] = ocr.page_sections(read[number], text, number)
        return [s for n in sorted(by_page) for s in by_page[n]], ()

    @staticmethod
    def _tables(data: bytes, sections: list[Section], scanned: list[int]) -> list[Section]:
        """Pages with a table: their prose, then each table as rows (``pdf_tables``)."""
        pages = [s.metadata["page"] for s in sections if s.metadata["page"] not in scanned]
        found = find_pdf_tables(data, pages) if pages else {}
        if not found:
            return sections
        out: list[Section] = []
        for section in sections:
            number = section.metadata["page"]
            page = found.get(number)
            if page is None:
                out.append(section)
                continue
            prose = normalize_ws("\n".join(page.prose))
            if prose:
                out.append(Section(text=prose, locator=f"p{number}", metadata={"page": number}))
            for k, (rows, heading) in enumerate(zip(page.tables, page.headings, strict=True), 1):
                meta: dict[str, object] = {"page": number}
                if heading:
                    meta["heading"] = heading
                table = table_section(rows[0], rows[1:], locator=f"p{number}.t{k}", metadata=meta)
                if table is not None:
                    out.append(table)
        return out

    @staticmethod
    def _decrypt(reader: PdfReader, source: str) -> None:
        """Owner-password-only PDFs open with an empty password, like in any viewer."""
        if not reader.is_encrypted:
            return
        try:
            ok = reader.decrypt("")
        except DependencyError as exc:
            raise IngestError(
                source, "encrypted PDF: decrypting it needs the 'cryptography' package"
            ) from exc
        except (PdfReadError, NotImplementedError) as exc:
            raise IngestError(source, f"encrypted PDF: cannot decrypt ({exc})") from exc
        if not ok:
            raise IngestError(source, "encrypted PDF: a password is required; decrypt it first")

    @staticmethod
    def _title(reader: PdfReader) -> str:
        try:
            meta = reader.metadata
            title = meta.title if meta is not None else None
        except Exception:  # a broken Info dictionary should not lose the pages
            return ""
        return title.strip() if isinstance(title, str) else ""


def _pictures(
    data: bytes, source: str, sections: list[Section], scanned: list[int]
) -> tuple[list[Section], tuple[str, ...]]:
    """Pictures on pages with a text layer, read by OCR (``ingest.pictures``): their text is a
    section of its page, after the page's own."""
    pictures = Pictures(source)
    if pictures.command is None:
        return sections, ()
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    pages = sorted({s.metadata["page"] for s in sections} - set(scanned))
    added: dict[int, list[Section]] = {}
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return sections, ()
    try:
        for number in pages:
            page = pdf[number - 1]
            try:
                images = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3))
                for k, obj in enumerate(images, start=1):
                    width, height = obj.get_px_size()
                    if not pictures.may_hold_text(width, height):
                        continue  # an icon, a rule, a bullet: not decoded at all
                    image = obj.get_bitmap(render=False).to_pil()
                    read = pictures.from_image(image, image.tobytes())
                    if read is None:
                        continue
                    meta = {"page": number, "picture": True}
                    text = normalize_ws("\n".join(page_lines(read)))
                    extra = added.setdefault(number, [])
                    if text:
                        extra.append(Section(text=text, locator=f"p{number}.i{k}", metadata=meta))
                    for t, rows in enumerate(page_tables(read), start=1):
                        table = table_section(
                            rows[0], rows[1:], locator=f"p{number}.i{k}.t{t}", metadata=meta
                        )
                        if table is not None:
                            extra.append(table)
            except pdfium.PdfiumError:
                continue
            finally:
                page.close()
    finally:
        pdf.close()
    if not added:
        return sections, pictures.warnings()
    out: list[Section] = []
    for i, section in enumerate(sections):
        out.append(section)
        number = section.metadata["page"]
        last = i + 1 == len(sections) or sections[i + 1].metadata["page"] != number
        if last:
            out += added.pop(number, [])
    return out, pictures.warnings()
