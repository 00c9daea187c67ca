"""Office, web, e-book and scanned documents (issue 30): parse speed per format, OCR seconds
per page, and the share of questions whose answer is cited at the right place.

1. Speed: a large file per format, written with the library that reads it (a Word file of
   ``200 * scale`` sections with tables, a deck of ``100 * scale`` slides, a workbook of
   ``20,000 * scale`` rows, a CSV of ``100,000 * scale`` rows, a page and a book of
   ``200 * scale`` sections, a text PDF of ``100 * scale`` pages), each loaded ``--repeat``
   times in this process (no sandbox) and chunked; plus the small sample files of
   ``tests/ingest/samples.py`` per file.
2. OCR: a scanned PDF of ``--ocr-pages`` pages (150 dpi A4 images, rendered at 150 dpi for
   tesseract) and the same pages as PNG files.
3. Cited right: the samples ingested into a scratch knowledge base; each sample question asked
   through ``ragchat.Chatbot`` (the offline answerer); a question counts when a citation of
   the reply is the right section, slide, sheet row, chapter or page (``samples.Expect``).
   ``--plain-tables`` writes table rows as bare cells (`a | b | c`) instead of naming their
   columns, to measure what the row sentences do.

Example::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_formats.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragchat.ingest import tables
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.pipeline import load_file
from ragchat.settings import ChunkingSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the sample files live in tests/
from tests.ingest import samples


def big_docx(path: Path, scale: int) -> int:
    import docx

    doc = docx.Document()
    for i in range(200 * scale):
        doc.add_heading(f"Section {i}", 1 + i % 3)
        for j in range(3):
            doc.add_paragraph(
                f"Paragraph {j} of section {i} explains policy {i * 7 + j} in detail. " * 3
            )
        if i % 20 == 0:
            table = doc.add_table(rows=1, cols=4)
            for cell, name in zip(
                table.rows[0].cells, ("Item", "Price", "Stock", "Note"), strict=True
            ):
                cell.text = name
            for r in range(20):
                for cell, v in zip(
                    table.add_row().cells, (f"item {r}", f"{r}.50", str(r * 3), "ok"), strict=True
                ):
                    cell.text = v
    doc.save(str(path))
    return 200 * scale


def big_pptx(path: Path, scale: int) -> int:
    from pptx import Presentation

    deck = Presentation()
    for i in range(100 * scale):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide {i}"
        body = slide.placeholders[1].text_frame
        body.text = f"Point one of slide {i} about target {i * 3}"
        for j in range(4):
            body.add_paragraph().text = f"Point {j + 2} of slide {i}: figures rose by {j + i}%"
    deck.save(str(path))
    return 100 * scale


def big_xlsx(path: Path, scale: int) -> int:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    sheet.append(["Id", "Name", "Category", "Price", "Stock", "Updated"])
    for i in range(20_000 * scale):
        sheet.append([i, f"Product {i}", f"cat {i % 17}", i * 0.25, i % 300, "2024-05-01"])
    book.save(str(path))
    return 20_000 * scale


def big_csv(path: Path, scale: int) -> int:
    rows = ["Id,Name,Category,Price,Stock"]
    rows += [f"{i},Product {i},cat {i % 17},{i * 0.25},{i % 300}" for i in range(100_000 * scale)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return 100_000 * scale


def big_html(path: Path, scale: int) -> int:
    parts = ["<html><head><title>Big page</title></head><body><nav>Home | News</nav><main>"]
    for i in range(200 * scale):
        parts.append(f"<h{1 + i % 3}>Section {i}</h{1 + i % 3}>")
        parts += [
            f"<p>Paragraph {j} of section {i} explains policy {i * 7 + j}.</p>" for j in range(3)
        ]
    parts.append("</main><footer>Copyright</footer></body></html>")
    path.write_text("".join(parts), encoding="utf-8")
    return 200 * scale


def big_epub(path: Path, scale: int) -> int:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("big")
    book.set_title("Big book")
    items = []
    for c in range(20 * scale):
        item = epub.EpubHtml(title=f"Chapter {c}", file_name=f"c{c}.xhtml", lang="en")
        body = "".join(
            f"<h2>Part {c}.{i}</h2>"
            + f"<p>Text of part {i} in chapter {c} about topic {i * c}.</p>" * 3
            for i in range(10)
        )
        item.content = f"<h1>Chapter {c}</h1>{body}"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = items
    epub.write_epub(str(path), book)
    return 200 * scale


def big_pdf(path: Path, scale: int) -> int:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for i in range(100 * scale):
        pdf.add_page()
        pdf.multi_cell(
            0, 6, f"Page {i}. " + "The committee reviewed the budget and the plan. " * 40
        )
    pdf.output(str(path))
    return 100 * scale


BIG: list[tuple[str, str, str, Callable[[Path, int], int]]] = [
    ("Word", "big.docx", "sections", big_docx),
    ("PowerPoint", "big.pptx", "slides", big_pptx),
    ("Excel", "big.xlsx", "rows", big_xlsx),
    ("CSV", "big.csv", "rows", big_csv),
    ("HTML", "big.html", "sections", big_html),
    ("EPUB", "big.epub", "sections", big_epub),
    ("PDF (text)", "big.pdf", "pages", big_pdf),
]


def timed(fn: Callable[[], Any], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def speed(tmp: Path, scale: int, repeat: int) -> None:
    chunker = Chunker(ChunkingSettings())
    print(f"\n## Parse speed (median of {repeat}, this process, no sandbox)")
    print("| format | file | size | units | load s | units/s | MB/s | chunk s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, name, unit, build in BIG:
        path = tmp / name
        units = build(path, scale)
        mb = path.stat().st_size / 1e6
        load_s = timed(lambda p=path: load_file(p), repeat)
        [doc] = load_file(path)
        chunk_s = timed(lambda d=doc: chunker.chunk(d), repeat)
        print(
            f"| {label} | {name} | {mb:.1f} MB | {units:,} {unit} | {load_s:.2f} | "
            f"{units / load_s:,.0f} | {mb / load_s:.1f} | {chunk_s:.2f} |"
        )
    print("\n## Sample files (tests/ingest/samples.py), files per second")
    print("| file | load ms | files/s |")
    print("|---|---:|---:|")
    for sample in samples.SAMPLES:
        if sample.name.endswith((".png", ".pdf")):
            continue  # OCR: below
        path = tmp / sample.name
        sample.write(path)
        load_s = timed(lambda p=path: load_file(p), max(repeat, 5))
        print(f"| {sample.name} | {load_s * 1000:.1f} | {1 / load_s:,.0f} |")


def ocr_speed(tmp: Path, pages: int) -> None:
    from ragchat.ingest import ocr

    if ocr.tesseract() is None:
        print("\n## OCR: tesseract not installed (scripts/ocr-deps); skipped")
        return
    texts = [f"Page {i + 1}\n" + "\n".join(samples.SCANNED_PAGES) for i in range(pages)]
    pdf = tmp / "scan.pdf"
    samples.write_scanned_pdf(pdf, texts)
    start = time.perf_counter()
    [doc] = load_file(pdf)
    pdf_s = time.perf_counter() - start
    pngs = []
    for i, text in enumerate(texts):
        pngs.append(tmp / f"scan{i}.png")
        samples.page_image(text).save(pngs[-1])
    start = time.perf_counter()
    for png in pngs:
        load_file(png)
    png_s = time.perf_counter() - start
    right = sum("admitted with pneumonia" in s.text for s in doc.sections)
    print("\n## OCR (pages rendered at their own resolution, tesseract single-threaded)")
    print("| input | pages | seconds | s/page | pages with the test phrase read right |")
    print("|---|---:|---:|---:|---:|")
    print(f"| scanned PDF | {pages} | {pdf_s:.1f} | {pdf_s / pages:.2f} | {right}/{pages} |")
    print(f"| PNG (150 dpi A4) | {pages} | {png_s:.1f} | {png_s / pages:.2f} | |")


def plain_rows() -> None:
    """Rows as bare cells, the way a grid of values reads without its header."""

    def bare(names: Any, cells: Any) -> str:
        values = [tables.cell_text(c) for c in cells]
        return " | ".join(v for v in values if v)

    tables.row_sentence = bare  # type: ignore[assignment]


def cited_right(tmp: Path) -> None:
    from ragchat import resources
    from ragchat.chatbot import Chatbot
    from ragchat.cli_common import load_settings
    from ragchat.ingestion.ingest import ingest_paths

    folder = tmp / "samples"
    samples.write_all(folder)
    settings = load_settings(tmp / "data")
    emb = resources.ingest_embedder(settings)
    base = resources.open_or_create_kb(settings, "office", emb, dense_backend="flat")
    report = ingest_paths(base, [folder], Chunker(settings.chunking))
    assert not report.errors, report.errors
    base.close()
    print("\n## Cited right (offline answerer, one knowledge base of all samples)")
    print("| file | questions | a citation right | first citation right | reply has the value |")
    print("|---|---:|---:|---:|---:|")
    totals = [0, 0, 0, 0, 0]
    misses = []
    with Chatbot(settings, kb="office") as bot:
        for sample in samples.SAMPLES:
            n = any_ok = first_ok = keyed = said = 0
            for question, expect in sample.questions:
                answer = bot.ask(question, thread_id=question)
                cites = [c.to_dict() for c in answer.sources]
                n += 1
                hit = any(expect.matches(c) for c in cites)
                any_ok += hit
                first_ok += bool(cites) and expect.matches(cites[0])
                right = expect.answered(answer.answer)
                keyed += right is not None
                said += bool(right)
                if not hit or right is False:
                    where = [f"{Path(c['source']).name}: {c['location']}" for c in cites]
                    misses.append(f"{question} -> {answer.answer[:100]!r} {where}")
            totals = [
                a + b for a, b in zip(totals, (n, any_ok, first_ok, keyed, said), strict=True)
            ]
            value = f"{said}/{keyed}" if keyed else "–"
            print(f"| {sample.name} | {n} | {any_ok}/{n} | {first_ok}/{n} | {value} |")
    n, any_ok, first_ok, keyed, said = totals
    print(
        f"| **all** | {n} | {any_ok}/{n} ({any_ok / n:.0%}) | {first_ok}/{n} ({first_ok / n:.0%})"
        f" | {said}/{keyed} ({said / keyed:.0%}) |"
    )
    for miss in misses:
        print(f"- miss: {miss}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ocr-pages", type=int, default=6)
    parser.add_argument("--only", choices=["speed", "ocr", "cited"], default=None)
    parser.add_argument("--plain-tables", action="store_true")
    args = parser.parse_args()
    one, five, _ = os.getloadavg()
    print(f"load: {one:.2f} {five:.2f} (1, 5 min); cores: {os.cpu_count()}")
    if args.plain_tables:
        plain_rows()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.only in (None, "speed"):
            speed(tmp, args.scale, args.repeat)
        if args.only in (None, "ocr"):
            ocr_speed(tmp, args.ocr_pages)
        if args.only in (None, "cited"):
            cited_right(tmp)


if __name__ == "__main__":
    main()
