"""Character error rate of OCR on scans of text we know (issue 35), before and after.

Pages come from ``scans.py`` (seeded: letter, form, two-column page, table; 150, 200 and
300 dpi; clean, light noise, 1-2 degree skew, JPEG), each saved as a scanner's one-page PDF
(the image embedded at its own resolution). Three readings of each:

- ``direct``: tesseract on the image itself, told its resolution (``--psm 3 --dpi N``), plain
  text: what a user gets from tesseract by hand, and the floor the issue sets;
- ``before``: what ragchat did until issue 35 — the page rendered by pdfium at 300 dpi,
  tesseract without a resolution, plain text;
- ``after``: ``ingest.ocr`` now — rendered at the image's own resolution, straightened,
  specks wiped, words with boxes, tables and forms rebuilt row by row, text cleaned.

CER = Levenshtein distance / reference length, on text with runs of white space folded to one
space. The reference reads a form as "Label: value" lines and a table row by row (cells
separated by spaces); a reading that gives a form's labels first and then its values is
charged for the order. ``after`` is compared on its prose plus its tables' rows in the same
form (the loader then writes those rows as ``Column: value`` lines).

    .venv/bin/python benchmarks/bench_ocr.py            # the whole grid (~6 min on 2 cores)
    .venv/bin/python benchmarks/bench_ocr.py --layouts letter --dpis 200 --noises light
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scans import LAYOUTS, NOISES, make_scan, scan_pdf

from ragchat.ingest import ocr
from ragchat.ingest.text_utils import normalize_ws


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    codes = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    cols = np.arange(len(b) + 1, dtype=np.int64)
    prev = cols.copy()
    for i, ch in enumerate(a, start=1):
        cost = (codes != ord(ch)).astype(np.int64)
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(cur - cols) + cols
    return int(prev[-1])


def cer(reference: str, reading: str) -> float:
    ref, hyp = " ".join(reference.split()), " ".join(reading.split())
    return edit_distance(ref, hyp) / max(1, len(ref))


def _tesseract(image: object, args: list[str]) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")  # type: ignore[attr-defined]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "-l", "eng", *args],
        input=buf.getvalue(),
        capture_output=True,
        env=env,
        check=True,
    )
    return done.stdout.decode("utf-8", "replace")


def before(pdf: Path) -> str:
    """The reading until issue 35: pdfium at 300 dpi, tesseract guessing the resolution."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    image = doc[0].render(scale=300 / 72, grayscale=True).to_pil()
    doc.close()
    return normalize_ws(_tesseract(image.convert("L"), ["--psm", "3"]))


def after(pdf: Path) -> str:
    [(_, image, dpi)] = list(ocr.render_pages(pdf.read_bytes(), [1], str(pdf)))
    page = ocr.read_image(image, str(pdf), str(ocr.tesseract()), dpi)
    rows = [(": " if t.pairs else " ").join(r) for t in page.tables for r in t.rows]
    return "\n".join([page.text, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--dpis", default="150,200,300")
    parser.add_argument("--noises", default=",".join(NOISES))
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    if ocr.tesseract() is None:
        sys.exit(ocr.MISSING)
    dpis = [int(d) for d in args.dpis.split(",")]
    results: list[dict[str, object]] = []
    print("| layout | dpi | noise | direct | before | after | s/page before | s/page after |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for layout in args.layouts.split(","):
            for dpi in dpis:
                for noise in args.noises.split(","):
                    scan = make_scan(layout, dpi, noise, args.seed)
                    pdf = Path(tmp) / f"{layout}-{dpi}-{noise}.pdf"
                    scan_pdf([scan], pdf)
                    direct = _tesseract(scan.image, ["--psm", "3", "--dpi", str(dpi)])
                    t0 = time.perf_counter()
                    old = before(pdf)
                    t1 = time.perf_counter()
                    new = after(pdf)
                    t2 = time.perf_counter()
                    row = {
                        "layout": layout,
                        "dpi": dpi,
                        "noise": noise,
                        "direct": cer(scan.text, direct),
                        "before": cer(scan.text, old),
                        "after": cer(scan.text, new),
                        "s_before": t1 - t0,
                        "s_after": t2 - t1,
                    }
                    results.append(row)
                    print(
                        f"| {layout} | {dpi} | {noise} | {row['direct']:.1%} | "
                        f"{row['before']:.1%} | {row['after']:.1%} | {t1 - t0:.2f} | "
                        f"{t2 - t1:.2f} |",
                        flush=True,
                    )
    for key in ("dpi", "noise", "layout"):
        groups: dict[object, list[dict[str, object]]] = defaultdict(list)
        for row in results:
            groups[row[key]].append(row)
        print(f"\n| {key} | direct | before | after | worse than direct |")
        print("|---|---|---|---|---|")
        for name, rows in groups.items():
            d, b, a = (
                statistics.mean(_num(r, m) for r in rows) for m in ("direct", "before", "after")
            )
            worse = sum(_num(r, "after") > _num(r, "direct") + 0.002 for r in rows)
            print(f"| {name} | {d:.2%} | {b:.2%} | {a:.2%} | {worse}/{len(rows)} |")
    secs_b = sorted(_num(r, "s_before") for r in results)
    secs_a = sorted(_num(r, "s_after") for r in results)
    print(
        f"\nOCR seconds per page (one tesseract thread): before median "
        f"{statistics.median(secs_b):.2f}, after median {statistics.median(secs_a):.2f} "
        f"(p90 {secs_a[int(0.9 * len(secs_a))]:.2f})"
    )


def _num(row: dict[str, object], key: str) -> float:
    value = row[key]
    assert isinstance(value, int | float)
    return float(value)


if __name__ == "__main__":
    main()
