"""Table readers compared on the PDFs of ``make_pdfs.py`` (issue 35): pdfplumber (lines, text,
lines then text), camelot (lattice, stream) and ragchat's own (pdfplumber for ruled grids, the
characters' boxes from pdfium for the rest). A true row counts when one detected row holds
exactly its cells; "tables on prose pages" counts tables found on pages without one (the
fees leaflet's first page and four pages of the userdocs manual).

camelot is not a ragchat dependency (it needs OpenCV and Ghostscript): run this in a
virtualenv that has camelot-py and pdfplumber, with ragchat's ``src`` on PYTHONPATH::

    python benchmarks/devsets/pdftables/make_pdfs.py /tmp/ragchat-pdftables
    PYTHONPATH=src /tmp/tblcmp/bin/python benchmarks/devsets/pdftables/compare_readers.py
"""

import logging
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
sys.path.insert(0, str(Path(__file__).resolve().parent))
import camelot  # noqa: E402
import pdfplumber  # noqa: E402
from make_pdfs import DOCS  # noqa: E402

from ragchat.ingest.pdf_tables import find_pdf_tables  # noqa: E402


def norm(c):
    return " ".join(str(c or "").split())


truth = {}  # (file, page) -> list of tables (rows)
for name, pages in DOCS.items():
    for p, (_, blocks) in enumerate(pages, 1):
        truth[(name, p)] = [b[1] for b in blocks if not isinstance(b, str)]


def score(found, tables):
    """share of true rows (header included) found as one detected row with the same cells"""
    rows = [tuple(map(norm, r)) for t in tables for r in t]
    got = {tuple(norm(c) for c in r if norm(c)) for t in found for r in t}
    return sum(tuple(c for c in r if c) in got for r in rows), len(rows)


def plumber(path, page_no, strategy):
    with pdfplumber.open(path) as pdf:
        page = pdf.pages[page_no - 1]
        s = {"vertical_strategy": strategy, "horizontal_strategy": strategy}
        return [t.extract() for t in page.find_tables(s)]


def plumber_auto(path, page_no):
    with pdfplumber.open(path) as pdf:
        page = pdf.pages[page_no - 1]
        t = [t.extract() for t in page.find_tables()]
        if t:
            return t
        return [
            t.extract()
            for t in page.find_tables({"vertical_strategy": "text", "horizontal_strategy": "text"})
        ]


def cam(path, page_no, flavor):
    ts = camelot.read_pdf(str(path), pages=str(page_no), flavor=flavor)
    return [t.df.values.tolist() for t in ts]


methods = {
    "pdfplumber lines": lambda p, n: plumber(p, n, "lines"),
    "pdfplumber text": lambda p, n: plumber(p, n, "text"),
    "pdfplumber lines→text": plumber_auto,
    "camelot lattice": lambda p, n: cam(p, n, "lattice"),
    "camelot stream": lambda p, n: cam(p, n, "stream"),
    "ragchat": lambda p, n: (lambda r: r[n].tables if n in r else [])(
        find_pdf_tables(Path(p).read_bytes(), [n])
    ),
}
base = Path("/tmp/ragchat-pdftables/text")
extra = [
    (Path(__file__).resolve().parents[1] / "userdocs/docs/lumen-wm814-manual.pdf", i)
    for i in range(1, 7)
]
for mname, fn in methods.items():
    hit = tot = 0
    fp = 0
    secs = 0.0
    pages = 0
    detail = []
    for (name, p), tables in truth.items():
        t0 = time.perf_counter()
        try:
            found = fn(base / name, p)
        except Exception as e:
            found = []
            detail.append(f"{name}:{p} ERR {e}")
        secs += time.perf_counter() - t0
        pages += 1
        h, n = score(found, tables)
        hit += h
        tot += n
        if not tables and found:
            fp += len(found)
        detail.append(f"{name}:{p} {h}/{n} tables={len(found)}")
    # manual: pages 3,4 hold tables; others prose
    mfp = 0
    for path, p in extra:
        t0 = time.perf_counter()
        try:
            found = fn(path, p)
        except Exception:
            found = []
        secs += time.perf_counter() - t0
        pages += 1
        if p not in (3, 4):
            mfp += len(found)
    print(
        f"{mname:24s} rows {hit}/{tot}  tables on prose pages {fp + mfp}  {secs / pages * 1000:.0f} ms/page"
    )
    print("   ", "; ".join(detail))
