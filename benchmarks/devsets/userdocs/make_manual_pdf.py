"""Writes docs/lumen-wm814-manual.pdf, a washing-machine manual of six pages (one topic a page,
so that gold answers can name their page), with fpdf2 (a dev dependency).

``ragchat eval documents`` calls ``build`` when the PDF is missing; the committed copy is what
this script writes."""

from __future__ import annotations

from pathlib import Path

TITLE = "Lumen WM-814 Washing Machine - User Manual"

PAGES: list[tuple[str, list[str | list[list[str]]]]] = [
    (
        "1. Safety and getting started",
        [
            "Thank you for choosing the Lumen WM-814, an 8 kg front-loading washing machine with a "
            "maximum spin speed of 1400 rpm. Read this manual before you use the machine and keep it "
            "for future reference.",
            "Children under 8 years old must be kept away from the machine unless they are "
            "continuously supervised. Do not open the detergent drawer while a programme is running.",
            "Before the first wash, remove the three transport bolts from the back of the machine. "
            "Keep the bolts: you will need them if you ever move the machine to a new home.",
            "Run a first wash with no laundry on the Cotton 90 programme with half a dose of detergent "
            "to clean out any water left over from factory testing.",
        ],
    ),
    (
        "2. Installation",
        [
            "Place the machine on a firm, level floor. Adjust the four feet with a spanner until the "
            "machine is level; it must not rock when you push its corners.",
            "Connect the inlet hose to a cold water tap with a 3/4 inch thread. The water pressure must "
            "be between 0.1 and 1 MPa. The drain hose must be fixed between 60 cm and 100 cm above the "
            "floor, otherwise the machine may siphon water out while it fills.",
            "The machine needs a 230 V, 13 A earthed socket. Do not use an extension lead or an adapter.",
        ],
    ),
    (
        "3. Washing programmes",
        [
            "Choose a programme with the dial. The table shows the highest temperature, the maximum "
            "load and the usual duration of each programme.",
            [
                ["Programme", "Max temperature", "Max load", "Duration"],
                ["Cotton", "90 C", "8 kg", "3 h 30 min"],
                ["Eco 40-60", "60 C", "8 kg", "3 h 15 min"],
                ["Synthetics", "60 C", "4 kg", "1 h 55 min"],
                ["Wool / Hand wash", "40 C", "2 kg", "1 h 05 min"],
                ["Quick 15'", "30 C", "2 kg", "15 min"],
                ["Rinse + Spin", "cold", "8 kg", "20 min"],
            ],
            "The Eco 40-60 programme uses the least energy for normally soiled cotton; it runs longer "
            "because it heats the water more slowly. Use Quick 15' only for lightly soiled items.",
        ],
    ),
    (
        "4. Error codes",
        [
            "If the machine detects a fault it stops and shows a code on the display. Check the table "
            "before you call for service.",
            [
                ["Code", "Meaning", "What to do"],
                [
                    "E01",
                    "Door not locked",
                    "Close the door firmly until it clicks, then press Start.",
                ],
                [
                    "E10",
                    "No water coming in",
                    "Check that the tap is open and the inlet hose is not "
                    "kinked; clean the inlet filter.",
                ],
                [
                    "E21",
                    "Water not draining",
                    "Clean the drain pump filter and check the drain hose for kinks or blockages.",
                ],
                [
                    "E32",
                    "Unbalanced load",
                    "Spread the laundry evenly or add more items, then restart.",
                ],
                ["E41", "Water leak detected", "Switch off, close the tap and call service."],
                ["F05", "Heating element fault", "Call service; do not use hot programmes."],
            ],
            "If a code comes back after you have done what the table says, switch the machine off at the "
            "socket for one minute. If the code still appears, contact Lumen service.",
        ],
    ),
    (
        "5. Cleaning and maintenance",
        [
            "Clean the drain pump filter once a month. It is behind the small flap at the bottom right "
            "of the front panel. Put a shallow tray and a towel on the floor first, because some water "
            "will come out. Turn the filter anticlockwise to remove it, rinse it under the tap, and screw "
            "it back in firmly.",
            "Clean the detergent drawer every two months: pull it out, press the release lever and rinse "
            "it in warm water.",
            "To stop smells, leave the door and the detergent drawer slightly open after each wash, and "
            "run the Drum Clean programme once a month with no laundry. Descale the machine every three "
            "months if you live in a hard water area.",
        ],
    ),
    (
        "6. Warranty and service",
        [
            "Your machine has a 2-year warranty covering parts and labour from the date of purchase. "
            "Register the machine at lumen-home.example/register within 28 days of purchase to extend "
            "the parts warranty to 5 years.",
            "The warranty does not cover damage caused by incorrect installation, by using the machine "
            "commercially, or by foreign objects such as coins or underwired bras.",
            "To book a repair, call Lumen service on 0345 600 1234, Monday to Saturday, 8 am to 8 pm. "
            "Have the model number and the serial number ready; both are printed on the label inside "
            "the door.",
        ],
    ),
]


def build(path: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(TITLE)
    pdf.set_auto_page_break(auto=True, margin=15)
    for heading, blocks in PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 15)
        pdf.multi_cell(0, 9, heading)
        pdf.ln(2)
        for block in blocks:
            if isinstance(block, str):
                pdf.set_font("Helvetica", "", 11)
                pdf.multi_cell(0, 6, block)
                pdf.ln(3)
                continue
            pdf.set_font("Helvetica", "", 10)
            with pdf.table() as table:
                for row in block:
                    cells = table.row()
                    for cell in row:
                        cells.cell(cell)
            pdf.ln(3)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


if __name__ == "__main__":
    print(build(Path(__file__).parent / "docs" / "lumen-wm814-manual.pdf"))
