"""Scanned pages made from text we know, for measuring OCR (issue 35).

Every page is drawn with a DejaVu font (Debian's fonts-dejavu-core) at the resolution of the
"scanner", then degraded the way a scan or a phone photo is: light noise (grey paper, grain,
dust specks, a little blur), a skew of 1-2 degrees, or JPEG compression. The same seed gives
the same pages, so figures can be compared across commits; nothing is stored in the repository.

Layouts: a typed ``letter``, a ``form`` (labels and filled-in values), a ``two-column`` page
and a ``table`` (ruled). ``Scan.text`` is the page's text in reading order (columns one after
the other, a table row by row with its cells separated by spaces).

    from scans import make_scan
    scan = make_scan("letter", dpi=200, noise="light", seed=1)
    scan.image  # a PIL grayscale image; scan.dpi, scan.text
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FONTS = Path("/usr/share/fonts/truetype/dejavu")
A4_IN = (8.27, 11.69)
LAYOUTS = ("letter", "form", "two-column", "table")
NOISES = ("clean", "light", "skew", "jpeg")

LETTER = [
    "Harbour Lettings Ltd, 14 Quay Street, Bristol BS1 4RN",
    "",
    "Ms Joanna Pryce",
    "Flat 2, 27 Cavendish Road",
    "Bristol BS6 7HQ",
    "",
    "Dear Ms Pryce,",
    "",
    "Your tenancy deposit of £1,150 is protected with the Deposit Protection Service",
    "under certificate number DPS-448213. The landlord has asked us to review the rents",
    "at 27 Cavendish Road, we are therefore writing to tell you that your monthly rent",
    "will go up from £875 to £940 from the first of September. Payments are due on the",
    "first working day of each month by standing order to sort code 30-94-57.",
    "",
    "If the boiler or the heating fails, call our repairs line on 0117 496 0321 at any",
    "hour. Non-urgent repairs can be reported by email to repairs@harbourlettings.co.uk",
    "and are usually visited within ten working days. Please keep the communal hallway",
    "clear of bicycles and pushchairs, as the fire officer asked after his last visit.",
    "",
    "The next gas safety inspection is booked for Tuesday 14 October between 8 am and",
    "noon. Please make sure someone is at home to let the engineer in, or tell us at",
    "least two days before so that we can arrange another time.",
    "",
    "Yours sincerely,",
    "Martin Okafor",
    "Property Manager",
]

FORM = [
    ("Patient name", "Eleanor Whitfield"),
    ("Date of birth", "03/11/1958"),
    ("NHS number", "485 777 3456"),
    ("Address", "9 Linden Grove, Leeds LS6 2QT"),
    ("Telephone", "0113 496 0782"),
    ("GP practice", "Headingley Medical Centre"),
    ("Referral reason", "Persistent cough for eight weeks"),
    ("Current medication", "Amlodipine 5 mg once daily"),
    ("Allergies", "Penicillin (rash)"),
    ("Smoking status", "Former smoker, stopped in 2009"),
    ("Urgency", "Routine, within six weeks"),
    ("Referring clinician", "Dr Priya Raman"),
]

COLUMNS = [
    "The library will close for refurbishment from the third of March until the end of",
    "April. During the closure books can be returned at the community centre on Mill",
    "Lane, which is open from nine in the morning until six in the evening on weekdays.",
    "Loans due during the closure are extended automatically, and no fines will be",
    "charged for items returned late in that period. The mobile library will visit the",
    "market square every Thursday afternoon between two and five o'clock.",
    "The new building will have a children's corner, twelve public computers, a quiet",
    "study room and a cafe run by volunteers from the friends of the library. Printing",
    "will cost ten pence a page in black and white and forty pence in colour. Members",
    "can book the meeting room for up to three hours a week free of charge; others pay",
    "eight pounds an hour. The reopening party is planned for Saturday the third of May",
    "with a storyteller, a magician and the mayor cutting the ribbon at eleven o'clock.",
]

TABLE = [
    ("Code", "Meaning", "What to do"),
    ("E01", "Water inlet blocked", "Clean the filter"),
    ("E02", "Drain pump fault", "Check the drain hose"),
    ("E03", "Door not closed", "Close the door firmly"),
    ("E04", "Heater failure", "Call an engineer"),
    ("E05", "Temperature sensor", "Restart the machine"),
    ("E06", "Motor overload", "Reduce the load"),
    ("E07", "Leak detected", "Turn off the water"),
    ("E08", "Power supply low", "Check the socket"),
]


@dataclass(frozen=True)
class Scan:
    layout: str
    dpi: int
    noise: str
    image: Any  # PIL.Image.Image, mode "L"
    text: str


def _font(name: str, points: float, dpi: int) -> Any:
    from PIL import ImageFont

    return ImageFont.truetype(str(FONTS / name), round(points * dpi / 72))


def _page(dpi: int) -> tuple[Any, Any]:
    from PIL import Image, ImageDraw

    image = Image.new("L", (round(A4_IN[0] * dpi), round(A4_IN[1] * dpi)), 255)
    return image, ImageDraw.Draw(image)


def _draw_letter(dpi: int) -> tuple[Any, str]:
    image, draw = _page(dpi)
    font = _font("DejaVuSerif.ttf", 10.5, dpi)
    x, y, step = round(0.9 * dpi), round(1.0 * dpi), round(10.5 * 1.45 * dpi / 72)
    for line in LETTER:
        if line:
            draw.text((x, y), line, fill=0, font=font)
        y += step
    return image, "\n".join(line for line in LETTER if line)


def _draw_form(dpi: int) -> tuple[Any, str]:
    image, draw = _page(dpi)
    bold = _font("DejaVuSans-Bold.ttf", 10, dpi)
    hand = _font("DejaVuSansMono.ttf", 10.5, dpi)
    x, y = round(0.9 * dpi), round(1.0 * dpi)
    draw.text(
        (x, y), "Outpatient Referral Form", fill=0, font=_font("DejaVuSans-Bold.ttf", 14, dpi)
    )
    y += round(0.55 * dpi)
    lines = ["Outpatient Referral Form"]
    for label, value in FORM:
        draw.text((x, y), f"{label}:", fill=0, font=bold)
        vx = x + round(2.3 * dpi)
        draw.text((vx, y), value, fill=0, font=hand)
        line_y = y + round(0.19 * dpi)
        draw.line((vx, line_y, vx + round(4.2 * dpi), line_y), fill=90, width=max(1, dpi // 150))
        y += round(0.42 * dpi)
        lines.append(f"{label}: {value}")
    return image, "\n".join(lines)


def _draw_columns(dpi: int) -> tuple[Any, str]:
    image, draw = _page(dpi)
    font = _font("DejaVuSerif.ttf", 9.5, dpi)
    head = _font("DejaVuSerif-Bold.ttf", 15, dpi)
    x, y, step = round(0.8 * dpi), round(0.9 * dpi), round(9.5 * 1.5 * dpi / 72)
    draw.text((x, y), "Town Library News", fill=0, font=head)
    y0 = y + round(0.5 * dpi)
    half = len(COLUMNS) // 2
    left, right = COLUMNS[:half], COLUMNS[half:]
    # Each column is one paragraph re-wrapped to ~42 characters a line.
    wrapped = [_wrap(" ".join(col), 42) for col in (left, right)]
    for col, lines in enumerate(wrapped):
        cx = x + col * round(3.5 * dpi)
        for i, line in enumerate(lines):
            draw.text((cx, y0 + i * step), line, fill=0, font=font)
    text = "\n".join(["Town Library News", *wrapped[0], *wrapped[1]])
    return image, text


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current] if current else lines


def _draw_table(dpi: int) -> tuple[Any, str]:
    image, draw = _page(dpi)
    font = _font("DejaVuSans.ttf", 10, dpi)
    bold = _font("DejaVuSans-Bold.ttf", 10, dpi)
    x0, y0 = round(0.9 * dpi), round(1.6 * dpi)
    draw.text(
        (x0, round(1.0 * dpi)), "Error codes", fill=0, font=_font("DejaVuSans-Bold.ttf", 14, dpi)
    )
    widths = [round(w * dpi) for w in (0.9, 2.4, 2.6)]
    row_h = round(0.36 * dpi)
    width = max(1, dpi // 100)
    for r, row in enumerate(TABLE):
        y = y0 + r * row_h
        x = x0
        for c, cell in enumerate(row):
            draw.text(
                (x + round(0.08 * dpi), y + round(0.08 * dpi)),
                cell,
                fill=0,
                font=bold if r == 0 else font,
            )
            x += widths[c]
    right, bottom = x0 + sum(widths), y0 + len(TABLE) * row_h
    for r in range(len(TABLE) + 1):
        draw.line((x0, y0 + r * row_h, right, y0 + r * row_h), fill=0, width=width)
    x = x0
    for w in [0, *widths]:
        x += w
        draw.line((x, y0, x, bottom), fill=0, width=width)
    text = "\n".join(["Error codes", *(" ".join(row) for row in TABLE)])
    return image, text


_DRAW = {
    "letter": _draw_letter,
    "form": _draw_form,
    "two-column": _draw_columns,
    "table": _draw_table,
}


def degrade(image: Any, noise: str, dpi: int, rng: random.Random) -> Any:
    """The page as a scanner or a camera would give it."""
    import numpy as np
    from PIL import Image, ImageFilter

    if noise == "clean":
        return image
    if noise == "jpeg":
        import io

        buf = io.BytesIO()
        image.save(buf, format="JPEG", quality=35)
        return Image.open(io.BytesIO(buf.getvalue())).convert("L")
    if noise == "skew":
        angle = rng.choice((-1, 1)) * rng.uniform(1.0, 2.0)
        return image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    # light: a little blur, grey paper with grain, and dust specks of one to two pixels at 300 dpi
    gen = np.random.default_rng(rng.randrange(2**32))
    soft = image.filter(ImageFilter.GaussianBlur(radius=0.35 * dpi / 200))
    arr = np.asarray(soft, dtype=np.float32)
    arr = arr * (236 / 255) + 8 + gen.normal(0, 9, arr.shape)
    h, w = arr.shape
    specks = int(h * w / (dpi * dpi) * 3)  # ~300 specks on an A4 page
    radius = max(1, round(dpi / 220))
    ys = gen.integers(0, h, specks)
    xs = gen.integers(0, w, specks)
    for yy, xx in zip(ys, xs, strict=True):
        r = int(gen.integers(1, radius + 1))
        arr[max(0, yy - r) : yy + r, max(0, xx - r) : xx + r] = gen.uniform(20, 110)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "L")


def make_scan(layout: str, dpi: int, noise: str = "clean", seed: int = 35) -> Scan:
    image, text = _DRAW[layout](dpi)
    rng = random.Random(f"{seed}/{layout}/{dpi}/{noise}")
    return Scan(layout, dpi, noise, degrade(image, noise, dpi, rng), text)


def scan_pdf(scans: list[Scan], path: Path) -> None:
    """The pages as a scanner's PDF: each image embedded at its own resolution."""
    first, *rest = [s.image for s in scans]
    first.save(str(path), "PDF", resolution=float(scans[0].dpi), save_all=True, append_images=rest)
