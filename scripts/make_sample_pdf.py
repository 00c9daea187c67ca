"""Generate the sample PDF leaflet shipped in ragchat's `medical` sample knowledge base.

Usage:
    python scripts/make_sample_pdf.py [OUTPUT_PATH]

Default output: src/ragchat/sample_kb/medical/medicine-safety-leaflet.pdf

The output is deterministic: a fixed creation date, no compression and only
fpdf2 core fonts (so all text must be latin-1; no smart quotes or em dashes).
Re-running the script produces identical bytes.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = (
    REPO_ROOT / "src" / "ragchat" / "sample_kb" / "medical" / "medicine-safety-leaflet.pdf"
)

TITLE = "Safe use of over-the-counter medicines"
DISCLAIMER = "Sample content for ragchat demos - not medical advice; consult a clinician."
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)

# Each page: (heading, [(subheading, [paragraph or "- bullet", ...]), ...])
PAGES: list[tuple[str, list[tuple[str, list[str]]]]] = [
    (
        "1. Storing medicines and reading labels",
        [
            (
                "Where to keep medicines",
                [
                    "Store medicines in a cool, dry place away from direct "
                    "sunlight. A bathroom cabinet is often too warm and humid; a "
                    "high kitchen cupboard away from the stove is usually better.",
                    "- Keep all medicines up and away, out of the sight and reach of children.",
                    "- Use child-resistant caps and close them fully after each use.",
                    "- Keep medicines in their original packaging so the label "
                    "and leaflet stay with them.",
                    "- Some liquids, such as certain antibiotic suspensions, must"
                    " be kept in the fridge. Check the label.",
                    "- Remind visitors to keep handbags and bags that may contain"
                    " medicines out of children's reach.",
                ],
            ),
            (
                "What the label tells you",
                [
                    "Before taking any over-the-counter medicine, read the whole "
                    "label, even if you have used the product before. Formulas "
                    "and strengths can change.",
                    "- Active ingredients: the medicine itself and the amount in "
                    "each tablet or dose.",
                    "- Uses: the symptoms the product is meant to treat.",
                    "- Warnings: who should not use it and when to stop and ask a clinician.",
                    "- Directions: how much to take, how often, and the most you "
                    "may take in 24 hours.",
                    "- Expiry date: do not use medicines after this date.",
                    "Many products share the same active ingredient. For example,"
                    " acetaminophen (paracetamol) is found in many cold and flu "
                    "remedies. Check every product you use so you do not take the"
                    " same ingredient twice.",
                    "If anything on the label is unclear, ask a pharmacist before"
                    " you take the medicine.",
                ],
            ),
        ],
    ),
    (
        "2. Reading dosing instructions and measuring liquid doses",
        [
            (
                "Understanding the directions",
                [
                    "Dosing directions usually give an amount, a time interval "
                    "and a daily limit. For example, a label might say to take "
                    "one tablet every 4 to 6 hours and no more than a set number "
                    "of tablets in 24 hours.",
                    "- Write down the time of each dose so you can keep track of the interval.",
                    "- Never take more than the maximum daily amount on the label.",
                    "- If you miss a dose of an as-needed medicine, do not double the next dose.",
                    "- Do not use a medicine for longer than the label says "
                    "without advice from a clinician.",
                ],
            ),
            (
                "Measuring liquid doses for children",
                [
                    "Children's medicines are often liquids, and doses are "
                    "usually based on the child's weight or age. Small measuring "
                    "mistakes can matter for a small child.",
                    "- Use the oral syringe, dosing cup or spoon that comes with the product.",
                    "- Do not use kitchen spoons; their size varies a lot.",
                    "- Check whether the dose is given in millilitres (mL) and "
                    "match the marking on the device.",
                    "- Read the measurement at eye level, on a flat surface.",
                    "- Check the strength of the liquid. Infant and children's "
                    "products may contain different amounts of medicine per mL.",
                    "- Agree with other carers who gives each dose, so the child "
                    "is not given a second dose by mistake.",
                    "If the label does not give a dose for your child's age or "
                    "weight, ask a pharmacist or clinician before giving the "
                    "medicine.",
                ],
            ),
        ],
    ),
    (
        "3. Disposing of unused medicines and getting help",
        [
            (
                "Getting rid of unused or expired medicines",
                [
                    "Old medicines in the home increase the risk of accidental "
                    "poisoning and misuse. Clear out expired or unneeded "
                    "medicines regularly.",
                    "- The best option is a medicine take-back scheme. Many "
                    "pharmacies accept unused medicines; ask at your local "
                    "pharmacy.",
                    "- Do not flush medicines down the toilet or sink unless the "
                    "label or local guidance says this is safe for that medicine.",
                    "- If no take-back option is available, follow your local "
                    "guidance for household disposal. This often involves mixing "
                    "medicines with something unappealing, sealing them in a bag "
                    "and placing them in household waste.",
                    "- Remove or cover personal details on labels before throwing"
                    " away empty packaging.",
                ],
            ),
            (
                "When to call poison control or emergency services",
                [
                    "Call your local poison control centre or emergency number straight away if:",
                    "- a child may have swallowed any medicine that was not meant for them;",
                    "- someone has taken more than the recommended dose, even if they seem well;",
                    "- someone has taken the wrong medicine or a medicine meant for someone else.",
                    "Call emergency services at once if the person is "
                    "unconscious, having a seizure, or has trouble breathing.",
                    "Have the medicine package with you when you call, and be "
                    "ready to say the person's age and weight, what was taken, "
                    "how much and when. Do not try to make the person vomit "
                    "unless you are told to.",
                    "Keep the poison control number saved in your phone and "
                    "written near the phone at home.",
                ],
            ),
        ],
    ),
]


def _check_latin1(text: str) -> str:
    text.encode("latin-1")  # raises UnicodeEncodeError on characters core fonts cannot show
    return text


class Leaflet(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", "B", 10)
        self.set_text_color(90, 90, 90)
        self.cell(0, 6, _check_latin1(TITLE), new_x="LMARGIN", new_y="NEXT", align="L")
        self.ln(2)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("Helvetica", "I", 8)
        self.set_text_color(90, 90, 90)
        self.cell(0, 5, _check_latin1(DISCLAIMER), new_x="LMARGIN", new_y="NEXT", align="C")
        self.cell(0, 5, f"Page {self.page_no()} of 3", align="C")


def build(output: Path) -> Path:
    pdf = Leaflet(format="A4")
    pdf.set_compression(False)
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(TITLE)
    pdf.set_author("ragchat sample content")
    pdf.set_subject("Sample leaflet for ragchat demos - not medical advice")
    pdf.set_creator("scripts/make_sample_pdf.py")
    pdf.set_producer("fpdf2")
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.set_margins(20, 15, 20)

    for page_heading, sections in PAGES:
        pdf.add_page()
        pdf.set_text_color(0, 0, 0)
        pdf.set_font("Helvetica", "B", 16)
        pdf.multi_cell(0, 8, _check_latin1(page_heading), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
        for subheading, paragraphs in sections:
            pdf.set_font("Helvetica", "B", 12)
            pdf.multi_cell(0, 7, _check_latin1(subheading), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
            pdf.set_font("Helvetica", "", 10.5)
            for para in paragraphs:
                _check_latin1(para)
                if para.startswith("- "):
                    pdf.set_x(pdf.l_margin + 4)
                    pdf.multi_cell(0, 5.5, "- " + para[2:], new_x="LMARGIN", new_y="NEXT")
                else:
                    pdf.multi_cell(0, 5.5, para, new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            pdf.ln(3)

    if pdf.page_no() != 3:
        raise RuntimeError(f"expected 3 pages, got {pdf.page_no()}")
    output.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(output))
    return output


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0]) if args else DEFAULT_OUTPUT
    path = build(output)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
