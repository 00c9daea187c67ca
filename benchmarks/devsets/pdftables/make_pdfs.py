"""PDFs with tables and questions about single cells (issue 35), written here with fpdf2.

Writes into a folder (default ``/tmp/ragchat-pdftables``), nothing committed but this script:

- ``text/``: four text-layer PDFs — a ruled price list over two pages, an unruled bus
  timetable, an error-code table with only horizontal rules, and a fees page whose cells wrap
  over two lines — each with prose around its tables;
- ``scanned/``: the same PDFs rasterised at 200 dpi (no text layer), as a scanner makes them;
- ``questions.jsonl`` (for both folders): each question about one cell, answered by its row
  (``facts``) on its page (``place``), in the format of ``ragchat eval documents``.

Run::

    .venv/bin/python benchmarks/devsets/pdftables/make_pdfs.py /tmp/ragchat-pdftables
    .venv/bin/ragchat eval documents /tmp/ragchat-pdftables/text \\
        --questions /tmp/ragchat-pdftables/questions.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

Table = list[list[str]]
# A page: its heading, then paragraphs (str) and tables (Table, with a border layout).
Block = str | tuple[str, Table]
DOCS: dict[str, list[tuple[str, list[Block]]]] = {
    "hardware-price-list.pdf": [
        (
            "Oakfield Hardware - Price list, spring",
            [
                "Prices include VAT. Trade customers get 10% off orders over 500 pounds; ask at "
                "the counter for an account form. Delivery within 15 miles is free on orders over "
                "60 pounds.",
                (
                    "ALL",
                    [
                        ["Item", "Size", "Price", "Stock code"],
                        ["Claw hammer", "16 oz", "£14.50", "HT-1021"],
                        ["Cordless drill", "18 V", "£89.00", "PT-2210"],
                        ["Wood screws", "4 x 40 mm, box of 200", "£6.75", "FX-0440"],
                        ["Spirit level", "600 mm", "£12.99", "HT-1307"],
                        ["Masonry paint", "5 litres", "£27.40", "PN-5105"],
                        ["Extension ladder", "3.9 m", "£129.00", "LD-3900"],
                        ["Tape measure", "8 m", "£7.25", "HT-1180"],
                    ],
                ),
                "Prices are valid until the end of May or while stocks last.",
            ],
        ),
        (
            "Garden",
            [
                "Garden goods are sold from the yard behind the shop.",
                (
                    "ALL",
                    [
                        ["Item", "Size", "Price", "Stock code"],
                        ["Compost", "50 litres", "£5.99", "GD-0050"],
                        ["Hosepipe", "30 m", "£24.00", "GD-3030"],
                        ["Lawn seed", "1 kg", "£11.49", "GD-1001"],
                        ["Wheelbarrow", "90 litres", "£64.00", "GD-0901"],
                        ["Pruning saw", "300 mm", "£16.80", "GD-0300"],
                    ],
                ),
            ],
        ),
    ],
    "bus-timetable.pdf": [
        (
            "Route 42 - Millbrook to Ashton Hospital",
            [
                "Buses run every day except Christmas Day. Times are the first bus of the morning "
                "from each stop; after that buses run every 20 minutes until 7 pm.",
                (
                    "NONE",
                    [
                        ["Stop", "Weekdays", "Saturday", "Sunday"],
                        ["Millbrook Green", "05:50", "06:40", "08:15"],
                        ["Station Road", "05:58", "06:48", "08:23"],
                        ["Market Square", "06:07", "06:57", "08:32"],
                        ["Riverside Park", "06:15", "07:05", "08:40"],
                        ["Kingsway Retail", "06:24", "07:14", "08:49"],
                        ["Ashton Hospital", "06:36", "07:26", "09:01"],
                    ],
                ),
                "Tickets can be bought from the driver by card or with the Route 42 app.",
            ],
        ),
    ],
    "dishwasher-error-codes.pdf": [
        (
            "Brightwash DW-60 - Troubleshooting",
            [
                "When the dishwasher stops and beeps three times, the display shows one of the "
                "codes below. Switch it off for one minute before you try again.",
                (
                    "HORIZONTAL_LINES",
                    [
                        ["Code", "Meaning", "What to do"],
                        ["F1", "Water does not drain", "Clean the filter under the lower basket"],
                        ["F2", "No water comes in", "Open the tap and check the inlet hose"],
                        ["F3", "Water too hot", "Check the supply is cold water"],
                        ["F4", "Overflow protection", "Unplug and call the service line"],
                        ["F5", "Spray arm blocked", "Remove and rinse the spray arms"],
                        ["F6", "Door sensor", "Close the door until it clicks"],
                    ],
                ),
                "The service line is open from 8 am to 6 pm on weekdays: 0800 014 2230.",
            ],
        ),
    ],
    "swimming-pool-fees.pdf": [
        (
            "Riverside Leisure Centre",
            [
                "The centre has a 25 metre pool, a learner pool and a gym. Opening hours are on "
                "the back page of this leaflet. Children under 8 must be accompanied in the water "
                "by an adult who is at least 16 years old.",
                "Members pay by monthly direct debit and can cancel with one month's notice.",
            ],
        ),
        (
            "Fees",
            [
                (
                    "ALL",
                    [
                        ["Activity", "Adult", "Junior (under 16)", "Notes"],
                        [
                            "Public swim",
                            "£5.20",
                            "£2.90",
                            "Free for under 5s with a paying adult; lanes roped at lunchtime",
                        ],
                        ["Aqua aerobics", "£6.80", "not offered", "Tuesday and Thursday evenings"],
                        [
                            "Swimming lessons",
                            "£9.50",
                            "£7.40",
                            "Per lesson, paid for a ten-week course in advance",
                        ],
                        ["Gym session", "£7.00", "£4.00", "Juniors from 14 with an induction"],
                        ["Sauna", "£4.50", "not offered", "Over 18 only"],
                    ],
                ),
            ],
        ),
    ],
}

QUESTIONS: list[dict[str, Any]] = [
    {
        "q": "How much is the cordless drill?",
        "facts": [["89.00", "89"]],
        "file": "hardware-price-list.pdf",
        "page": 1,
        "column": "Price",
    },
    {
        "q": "What is the stock code of the spirit level?",
        "facts": [["HT-1307"]],
        "file": "hardware-price-list.pdf",
        "page": 1,
        "column": "Stock code",
    },
    {
        "q": "What size is the masonry paint?",
        "facts": [["5 litres"]],
        "file": "hardware-price-list.pdf",
        "page": 1,
        "column": "Size",
    },
    {
        "q": "How much does the extension ladder cost?",
        "facts": [["129.00", "129"]],
        "file": "hardware-price-list.pdf",
        "page": 1,
        "column": "Price",
    },
    {
        "q": "What does the hosepipe cost?",
        "facts": [["24.00", "24"]],
        "file": "hardware-price-list.pdf",
        "page": 2,
        "column": "Price",
    },
    {
        "q": "What is the price of a wheelbarrow?",
        "facts": [["64.00", "64"]],
        "file": "hardware-price-list.pdf",
        "page": 2,
        "column": "Price",
    },
    {
        "q": "When is the first Saturday bus from Market Square?",
        "facts": [["06:57"]],
        "file": "bus-timetable.pdf",
        "page": 1,
        "column": "Saturday",
    },
    {
        "q": "What time does the first weekday bus leave Riverside Park?",
        "facts": [["06:15"]],
        "file": "bus-timetable.pdf",
        "page": 1,
        "column": "Weekdays",
    },
    {
        "q": "When does the first Sunday bus reach Ashton Hospital?",
        "facts": [["09:01"]],
        "file": "bus-timetable.pdf",
        "page": 1,
        "column": "Sunday",
    },
    {
        "q": "First bus from Station Road on a Sunday?",
        "facts": [["08:23"]],
        "file": "bus-timetable.pdf",
        "page": 1,
        "column": "Sunday",
    },
    {
        "q": "What does error F2 mean on the dishwasher?",
        "facts": [["No water comes in"]],
        "file": "dishwasher-error-codes.pdf",
        "page": 1,
        "column": "Meaning",
    },
    {
        "q": "What should I do about code F5?",
        "facts": [["spray arms"]],
        "file": "dishwasher-error-codes.pdf",
        "page": 1,
        "column": "What to do",
    },
    {
        "q": "What does F3 mean?",
        "facts": [["too hot"]],
        "file": "dishwasher-error-codes.pdf",
        "page": 1,
        "column": "Meaning",
    },
    {
        "q": "What do I do when the dishwasher shows F6?",
        "facts": [["clicks"]],
        "file": "dishwasher-error-codes.pdf",
        "page": 1,
        "column": "What to do",
    },
    {
        "q": "How much is a junior swimming lesson?",
        "facts": [["7.40"]],
        "file": "swimming-pool-fees.pdf",
        "page": 2,
        "column": "Junior (under 16)",
    },
    {
        "q": "What does an adult pay for aqua aerobics?",
        "facts": [["6.80"]],
        "file": "swimming-pool-fees.pdf",
        "page": 2,
        "column": "Adult",
    },
    {
        "q": "How much is a gym session for an adult?",
        "facts": [["7.00"]],
        "file": "swimming-pool-fees.pdf",
        "page": 2,
        "column": "Adult",
    },
    {
        "q": "What does a junior pay for a public swim?",
        "facts": [["2.90"]],
        "file": "swimming-pool-fees.pdf",
        "page": 2,
        "column": "Junior (under 16)",
    },
]


def _font(pdf: Any) -> None:
    dejavu = Path("/usr/share/fonts/truetype/dejavu")
    pdf.add_font("DejaVu", "", str(dejavu / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(dejavu / "DejaVuSans-Bold.ttf"))


def write_pdf(path: Path, pages: list[tuple[str, list[Block]]]) -> None:
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    pdf = FPDF(format="A4")
    _font(pdf)
    pdf.set_title(path.stem.replace("-", " ").title())
    for heading, blocks in pages:
        pdf.add_page()
        pdf.set_font("DejaVu", "B", 15)
        pdf.multi_cell(0, 9, heading)
        pdf.ln(3)
        pdf.set_font("DejaVu", "", 10.5)
        for block in blocks:
            if isinstance(block, str):
                pdf.multi_cell(0, 6, block)
                pdf.ln(3)
                continue
            borders, rows = block
            with pdf.table(
                borders_layout=borders,
                headings_style=FontFace(emphasis="BOLD"),
                line_height=6.5,
                padding=1.5,
                text_align="LEFT",
            ) as table:
                for row in rows:
                    cells = table.row()
                    for value in row:
                        cells.cell(value)
            pdf.ln(4)
    pdf.output(str(path))


def rasterise(pdf_path: Path, out: Path, dpi: int = 200) -> None:
    """The PDF as a scanner would give it back: one grey image a page, no text layer."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    images = [page.render(scale=dpi / 72, grayscale=True).to_pil() for page in doc]
    doc.close()
    images[0].save(str(out), "PDF", resolution=float(dpi), save_all=True, append_images=images[1:])


def build(folder: Path) -> None:
    (folder / "text").mkdir(parents=True, exist_ok=True)
    (folder / "scanned").mkdir(parents=True, exist_ok=True)
    for name, pages in DOCS.items():
        write_pdf(folder / "text" / name, pages)
        rasterise(folder / "text" / name, folder / "scanned" / name)
    with (folder / "questions.jsonl").open("w") as fh:
        for i, q in enumerate(QUESTIONS, start=1):
            record = {
                "id": f"pt{i:02d}",
                "question": q["q"],
                "answerable": True,
                "facts": q["facts"],
                "where": "table",
                "place": {"file": q["file"], "page": q["page"]},
                "column": q["column"],
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", default=Path("/tmp/ragchat-pdftables"))
    build(parser.parse_args().folder)
