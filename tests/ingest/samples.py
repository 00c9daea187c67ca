"""Sample documents in every format ragchat reads, written with the libraries that read them,
and questions whose answer sits in a known section, slide, sheet row, chapter or page.

Test and benchmark data, not part of the installed package: used by the loader tests, by
``benchmarks/bench_formats.py`` (speed per format and the share of questions cited right),
``benchmarks/bench_legacy.py``, and to try ragchat by hand (``write_all(folder)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FEES = [
    ("Consultation", "45 EUR", "30 minutes", "Covered by basic insurance"),
    ("Blood test", "28 EUR", "10 minutes", "Results within 2 working days"),
    ("Travel vaccination", "65 EUR", "20 minutes", "Book 6 weeks before departure"),
    ("Medical certificate", "15 EUR", "5 minutes", ""),
]
FORMULARY = [
    ("Amoxicillin", "500 mg", "3 times a day", "1500 mg", "Antibiotic"),
    ("Ibuprofen", "400 mg", "every 6 hours", "1200 mg", "Take with food"),
    ("Paracetamol", "1 g", "every 4 to 6 hours", "4 g", "Lower dose with liver disease"),
    ("Cetirizine", "10 mg", "once a day", "10 mg", "May cause drowsiness"),
    ("Omeprazole", "20 mg", "once a day before breakfast", "40 mg", "Swallow whole"),
    ("Metformin", "500 mg", "twice a day with meals", "2000 mg", "Check kidney function"),
    ("Salbutamol", "100 micrograms", "as needed", "800 micrograms", "Inhaler, 1 to 2 puffs"),
    ("Loratadine", "10 mg", "once a day", "10 mg", "Non-drowsy antihistamine"),
]


@dataclass(frozen=True)
class Expect:
    """Where an answer must be cited: the file and one of section/slide/sheet row/chapter/page."""

    file: str
    heading: str | None = None  # a heading in the citation's section path
    slide: int | None = None
    sheet: str | None = None
    row: int | None = None  # a spreadsheet row number inside the cited row range
    chapter: int | None = None
    page: int | None = None
    answer: str | None = None  # words a right reply contains (case-insensitive)

    def answered(self, reply: str) -> bool | None:
        return None if self.answer is None else self.answer.lower() in reply.lower()

    def matches(self, citation: dict[str, Any]) -> bool:
        if Path(str(citation.get("source", ""))).name != self.file:
            return False
        if self.heading is not None and self.heading not in (citation.get("section_path") or ()):
            return False
        if self.slide is not None and citation.get("slide") != self.slide:
            return False
        if self.sheet is not None and (citation.get("sheet") or "") != self.sheet:
            return False
        if self.row is not None:
            rows = citation.get("rows")
            if not rows or not rows[0] <= self.row <= rows[-1]:
                return False
        if self.chapter is not None and str(citation.get("chapter")) != str(self.chapter):
            return False
        return self.page is None or citation.get("page") == self.page


@dataclass
class Sample:
    name: str
    write: Callable[[Path], None]
    questions: list[tuple[str, Expect]] = field(default_factory=list)


def write_docx(path: Path) -> None:
    import docx

    doc = docx.Document()
    doc.core_properties.title = "Harbor Clinic handbook"
    doc.add_heading("Harbor Clinic handbook", 0)
    doc.add_heading("Opening hours", 1)
    doc.add_paragraph("The clinic opens at 7:30 on weekdays and closes at 19:00.")
    doc.add_paragraph("On Saturdays a walk-in service runs from 9:00 to 12:00.")
    doc.add_heading("Vaccinations", 1)
    doc.add_heading("Children", 2)
    doc.add_paragraph("Children are vaccinated on Wednesday afternoons by nurse Okafor.")
    doc.add_heading("Travel", 2)
    doc.add_paragraph("Yellow fever vaccine is given only at the Dock Street site.")
    doc.add_heading("Fees", 1)
    table = doc.add_table(rows=1, cols=4)
    for cell, name in zip(
        table.rows[0].cells, ("Service", "Price", "Duration", "Notes"), strict=True
    ):
        cell.text = name
    for fee in FEES:
        cells = table.add_row().cells
        for cell, value in zip(cells, fee, strict=True):
            cell.text = value
    doc.add_heading("Parking", 1)
    doc.add_paragraph("Patients park free for two hours in the yard behind building B.")
    doc.save(str(path))


def write_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.title = "Quarterly review"
    slides = [
        ("Quarterly review", ["Harbor Clinic, third quarter"]),
        ("Patient numbers", ["Visits rose to 12,400 this quarter", "Telehealth was 18% of visits"]),
        ("Waiting times", ["The median wait fell to 11 minutes", "Mondays remain the busiest day"]),
        ("New services", ["A sleep clinic opens in January", "Physiotherapy moves to floor 3"]),
        ("Budget", ["Spending stayed 2% under budget", "The new X-ray unit cost 84,000 EUR"]),
    ]
    for title, bullets in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Staffing by site"
    rows = [("Site", "Doctors", "Nurses"), ("Dock Street", "6", "11"), ("Hill Road", "4", "7")]
    shape = slide.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    slide.notes_slide.notes_text_frame.text = "Hill Road hires two nurses in spring."
    deck.save(str(path))


def write_xlsx(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Formulary"
    sheet.append(["Clinic formulary, reviewed March"])
    sheet.append([])
    sheet.append(["Drug", "Adult dose", "Frequency", "Max per day", "Notes"])
    for row in FORMULARY:
        sheet.append(list(row))
    for i in range(40):
        sheet.append([f"Compound {i:03d}", f"{i + 1} mg", "once a day", f"{2 * i + 2} mg", ""])
    staff = book.create_sheet("Staff")
    staff.append(["Name", "Role", "Site", "Phone extension"])
    staff.append(["Dr. Amina Okafor", "Paediatrician", "Dock Street", 4411])
    staff.append(["Dr. Lars Berg", "General practitioner", "Hill Road", 4520])
    staff.append(["Mei Tanaka", "Pharmacist", "Dock Street", 4302])
    book.save(str(path))


def write_csv(path: Path) -> None:
    lines = ["Room,Floor,Equipment,Bookable", "A1,0,ECG machine,yes", "B7,2,Ultrasound,yes"]
    lines += ["C3,3,Physiotherapy bench,no", "D2,1,Dental chair,yes"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


HTML = """<!doctype html><html><head><title>Visiting Harbor Clinic</title></head><body>
<header><nav><a href="/">Home</a> | <a href="/news">News</a> | <a href="/jobs">Jobs</a></nav>
</header>
<main>
<h1>Visiting Harbor Clinic</h1>
<p>Visitors are welcome on the wards between 14:00 and 20:00.</p>
<h2>Getting here</h2>
<h3>By bus</h3>
<p>Bus line 42 stops at the Harbor Clinic gate every ten minutes.</p>
<h3>By car</h3>
<p>The multi-storey car park on Quay Lane charges 2 EUR per hour.</p>
<h2>Ward phone numbers</h2>
<table><tr><th>Ward</th><th>Floor</th><th>Phone</th></tr>
<tr><td>Maternity</td><td>4</td><td>0301 555 0140</td></tr>
<tr><td>Cardiology</td><td>2</td><td>0301 555 0122</td></tr>
<tr><td>Orthopaedics</td><td>3</td><td>0301 555 0133</td></tr></table>
</main>
<footer><p>Copyright Harbor Clinic. Cookie settings. Privacy policy.</p></footer>
<script>var tracking = "do not index me";</script>
</body></html>
"""


def write_html(path: Path) -> None:
    path.write_text(HTML, encoding="utf-8")


CHAPTERS = [
    ("The first visit", "At the first visit the nurse measures height, weight and blood pressure."),
    ("Living with asthma", "Keep the reliever inhaler with you and use a spacer for children."),
    ("Healthy sleep", "Adults need seven to nine hours; keep screens out of the bedroom."),
    ("After surgery", "Do not drive for 24 hours after a general anaesthetic."),
]


def write_epub(path: Path) -> None:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("harbor-patient-guide")
    book.set_title("Harbor patient guide")
    book.set_language("en")
    items = []
    for i, (title, text) in enumerate(CHAPTERS, start=1):
        item = epub.EpubHtml(title=title, file_name=f"chap_{i}.xhtml", lang="en")
        item.content = f"<h1>{title}</h1><p>{text}</p><p>More advice follows in this chapter.</p>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)


SCANNED_PAGES = [
    "Discharge letter\nThe patient was admitted with pneumonia\nand treated with antibiotics.",
    "Follow-up\nThe patient should see the GP\nin two weeks for a chest X-ray.",
]


def page_image(text: str, size: tuple[int, int] = (1240, 1754)) -> Any:
    """A page of ``text`` as a 150 dpi A4 grayscale image, like a scan."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=36)
    y = 150
    for line in text.split("\n"):
        draw.text((120, y), line, fill=0, font=font)
        y += 60
    return image


def write_scanned_pdf(path: Path, pages: list[str] | None = None) -> None:
    images = [page_image(t) for t in pages or SCANNED_PAGES]
    images[0].save(str(path), "PDF", resolution=150.0, save_all=True, append_images=images[1:])


def write_png(path: Path) -> None:
    page_image("Prescription\nTake amoxicillin 500 mg\nthree times a day for 7 days.").save(path)


SAMPLES = [
    Sample(
        "handbook.docx",
        write_docx,
        [
            (
                "When does the clinic open on weekdays?",
                Expect("handbook.docx", heading="Opening hours", answer="7:30"),
            ),
            (
                "Who vaccinates children and when?",
                Expect("handbook.docx", heading="Children", answer="Wednesday"),
            ),
            (
                "Where is yellow fever vaccine given?",
                Expect("handbook.docx", heading="Travel", answer="Dock Street"),
            ),
            (
                "How much does a blood test cost?",
                Expect("handbook.docx", heading="Fees", answer="28 EUR"),
            ),
            (
                "Where can patients park?",
                Expect("handbook.docx", heading="Parking", answer="building B"),
            ),
        ],
    ),
    Sample(
        "review.pptx",
        write_pptx,
        [
            (
                "How many visits were there this quarter?",
                Expect("review.pptx", slide=2, answer="12,400"),
            ),
            (
                "What was the median waiting time?",
                Expect("review.pptx", slide=3, answer="11 minutes"),
            ),
            ("When does the sleep clinic open?", Expect("review.pptx", slide=4, answer="January")),
            (
                "How much did the new X-ray unit cost?",
                Expect("review.pptx", slide=5, answer="84,000"),
            ),
            ("How many nurses work at Dock Street?", Expect("review.pptx", slide=6, answer="11")),
        ],
    ),
    Sample(
        "formulary.xlsx",
        write_xlsx,
        [
            (
                "What is the maximum daily dose of ibuprofen?",
                Expect("formulary.xlsx", sheet="Formulary", row=5, answer="1200 mg"),
            ),
            (
                "How often is omeprazole taken?",
                Expect("formulary.xlsx", sheet="Formulary", row=8, answer="before breakfast"),
            ),
            (
                "What is the adult dose of metformin?",
                Expect("formulary.xlsx", sheet="Formulary", row=9, answer="500 mg"),
            ),
            (
                "What is Mei Tanaka's phone extension?",
                Expect("formulary.xlsx", sheet="Staff", row=4, answer="4302"),
            ),
            (
                "Which site does Dr. Lars Berg work at?",
                Expect("formulary.xlsx", sheet="Staff", row=3, answer="Hill Road"),
            ),
        ],
    ),
    Sample(
        "rooms.csv",
        write_csv,
        [
            ("On which floor is the ultrasound room?", Expect("rooms.csv", row=3)),
            ("Is the physiotherapy bench bookable?", Expect("rooms.csv", row=4)),
        ],
    ),
    Sample(
        "visiting.html",
        write_html,
        [
            (
                "Which bus goes to the clinic?",
                Expect("visiting.html", heading="By bus", answer="42"),
            ),
            (
                "How much does the car park on Quay Lane cost?",
                Expect("visiting.html", heading="By car", answer="2 EUR"),
            ),
            (
                "What is the phone number of the cardiology ward?",
                Expect("visiting.html", heading="Ward phone numbers", answer="0301 555 0122"),
            ),
        ],
    ),
    Sample(
        "guide.epub",
        write_epub,
        [
            (
                "What does the nurse measure at the first visit?",
                Expect("guide.epub", chapter=1, answer="blood pressure"),
            ),
            (
                "Should children use a spacer with an inhaler?",
                Expect("guide.epub", chapter=2, answer="spacer"),
            ),
            (
                "How many hours of sleep do adults need?",
                Expect("guide.epub", chapter=3, answer="seven to nine"),
            ),
            (
                "When can I drive after a general anaesthetic?",
                Expect("guide.epub", chapter=4, answer="24 hours"),
            ),
        ],
    ),
    Sample(
        "discharge-scan.pdf",
        write_scanned_pdf,
        [
            (
                "What was the patient admitted with?",
                Expect("discharge-scan.pdf", page=1, answer="pneumonia"),
            ),
            (
                "When should the patient see the GP?",
                Expect("discharge-scan.pdf", page=2, answer="two weeks"),
            ),
        ],
    ),
    Sample(
        "prescription.png",
        write_png,
        [
            (
                "For how many days should amoxicillin be taken?",
                Expect("prescription.png", page=1, answer="7 days"),
            ),
        ],
    ),
]


def write_all(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for sample in SAMPLES:
        sample.write(folder / sample.name)
        paths.append(folder / sample.name)
    return paths
