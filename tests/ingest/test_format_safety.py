"""Crafted files in the new formats fail alone, fast, with a reason that says what is wrong:
zip bombs, XML entity expansion and external entities, a spreadsheet of a million empty rows,
HTML nested 100,000 deep, an image of 30,000 x 30,000 pixels."""

from __future__ import annotations

import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from tests.ingest import samples

from ragchat.errors import IngestError
from ragchat.ingest.pipeline import load_file, load_paths
from ragchat.ingest.sandbox import ParseLimits, ParseWorker
from ragchat.ingest.sheets import MAX_EMPTY_RUN

BOMB_PARTS = ("[Content_Types].xml", "word/document.xml")


CAP_MIB = 16  # the cap in these tests (512 MiB by default): a bomb is quicker to write


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ~20 KB zip whose one part inflates to 20 MiB of zeros, over the tests' cap."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.zip"
    chunk = b"\0" * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(BOMB_PARTS[0], "<Types/>")
        with zf.open(BOMB_PARTS[1], "w", force_zip64=True) as part:
            for _ in range(CAP_MIB + 4):
                part.write(chunk)
    assert path.stat().st_size < 100_000
    return path


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragchat.ingest.archive.MAX_UNCOMPRESSED", CAP_MIB << 20)


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx", ".epub"])
@pytest.mark.usefixtures("small_cap")
def test_a_zip_bomb_is_refused_before_anything_inflates(
    bomb: Path, tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"bomb{suffix}"
    shutil.copy(bomb, path)
    with pytest.raises(
        IngestError, match=r"would inflate to 20 MiB \(a zip bomb\?; at most 16 MiB"
    ):
        load_file(path)


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">'
        for i in range(1, 10)
    )
    + "]>\n"
)
EXTERNAL = '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n'


def _rewrite(path: Path, part: str, prolog: str, body_ref: str) -> None:
    """Puts ``prolog`` before ``part``'s root element and a reference into its first text."""
    with zipfile.ZipFile(path) as zf:
        items = {n: zf.read(n) for n in zf.namelist()}
    xml = items[part].decode("utf-8")
    root = xml.index("<", xml.index("?>") + 2) if xml.startswith("<?xml") else 0
    xml = prolog + xml[root:]
    xml = xml.replace("<w:t>", f"<w:t>{body_ref}", 1).replace("<t>", f"<t>{body_ref}", 1)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in items.items():
            zf.writestr(name, xml.encode() if name == part else data)


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("handbook.docx", "word/document.xml"),
        ("review.pptx", "ppt/slides/slide2.xml"),
        ("formulary.xlsx", "xl/worksheets/sheet1.xml"),
        ("guide.epub", "EPUB/chap_1.xhtml"),
    ],
)
@pytest.mark.parametrize(("prolog", "ref"), [(LAUGHS, "&lol9;"), (EXTERNAL, "&secret;")])
def test_xml_entities_are_refused(
    tmp_path: Path, name: str, part: str, prolog: str, ref: str
) -> None:
    path = tmp_path / name
    next(s for s in samples.SAMPLES if s.name == name).write(path)
    _rewrite(path, part, prolog, ref)
    with pytest.raises(IngestError, match=f"{part} declares XML entities"):
        load_file(path)


def _sheet_with_empty_rows(path: Path, values: bool, rows: int = 1_000_000) -> None:
    """An XLSX whose sheet lists ``rows`` empty (styled, valueless) rows, after a header and
    one row of values when ``values``."""
    samples.write_xlsx(path)

    def row(n: int, *values: str) -> str:
        cells = "".join(
            f'<c r="{col}{n}" t="inlineStr"><is><t>{v}</t></is></c>'
            for col, v in zip("AB", values, strict=False)
        )
        return f'<row r="{n}">{cells}</row>'

    head = row(1, "Drug", "Dose") + row(2, "Ibuprofen", "400 mg")
    first = 3 if values else 1
    empty = "".join(f'<row r="{i}"><c r="A{i}" s="0"/></row>' for i in range(first, first + rows))
    sheet = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"<sheetData>{head if values else ''}{empty}</sheetData></worksheet>"
    )
    with zipfile.ZipFile(path) as zf:
        items = {n: zf.read(n) for n in zf.namelist()}
    items["xl/worksheets/sheet1.xml"] = sheet.encode()
    items["xl/worksheets/sheet2.xml"] = (
        sheet.replace(head, "").encode() if values else sheet.encode()
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in items.items():
            zf.writestr(name, data)


def test_a_million_empty_rows_stop_the_sheet_and_fail_a_file_with_no_values(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty.xlsx"
    _sheet_with_empty_rows(empty, values=False)
    with pytest.raises(
        IngestError, match=f"no values in any sheet .*after {MAX_EMPTY_RUN:,} empty rows"
    ):
        load_file(empty)


def test_values_above_a_million_empty_rows_are_read_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "tail.xlsx"
    _sheet_with_empty_rows(path, values=True)
    [doc] = load_file(path)
    assert doc.sections[0].text == "Drug: Ibuprofen; Dose: 400 mg."
    assert doc.sections[0].row_numbers == (2,)
    assert any("stopped reading at row" in w for w in doc.warnings)


def test_deeply_nested_html_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.html"
    path.write_text("<html><body>" + "<div>" * 100_000 + "x" + "</div>" * 100_000, encoding="utf-8")
    with pytest.raises(IngestError, match="HTML nested deeper than 256 elements"):
        load_file(path)


def _png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG claiming ``width`` x ``height`` pixels with almost no data: what a bomb looks like
    before it is decoded."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1024)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def test_a_huge_image_is_refused_from_its_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With or without tesseract: the size is checked before OCR is even looked for.
    monkeypatch.setattr("ragchat.ingest.images.tesseract", lambda: "/usr/bin/tesseract")
    path = tmp_path / "huge.png"
    _png_header_only(path, 30_000, 30_000)
    with pytest.raises(IngestError, match="image too large: 900,000,000 pixels"):
        load_file(path)


@pytest.mark.usefixtures("small_cap")
def test_crafted_files_fail_alone_in_a_folder(tmp_path: Path, bomb: Path) -> None:
    shutil.copy(bomb, tmp_path / "bomb.docx")
    (tmp_path / "deep.html").write_text("<div>" * 5000, encoding="utf-8")
    samples.write_csv(tmp_path / "rooms.csv")
    docs, errors = load_paths([tmp_path])
    assert [Path(d.source).name for d in docs] == ["rooms.csv"]
    assert sorted(Path(e.source).name for e in errors) == ["bomb.docx", "deep.html"]


def test_crafted_files_fail_alone_in_the_parse_sandbox(tmp_path: Path) -> None:
    samples.write_xlsx(tmp_path / "laughs.xlsx")
    _rewrite(tmp_path / "laughs.xlsx", "xl/worksheets/sheet1.xml", LAUGHS, "&lol9;")
    (tmp_path / "deep.html").write_text("<div>" * 5000, encoding="utf-8")
    samples.write_html(tmp_path / "ok.html")
    worker = ParseWorker(ParseLimits(timeout_s=60, memory_mb=2048, max_chars=1_000_000))
    try:
        with pytest.raises(IngestError, match="declares XML entities"):
            worker.load(tmp_path / "laughs.xlsx")
        with pytest.raises(IngestError, match="nested deeper"):
            worker.load(tmp_path / "deep.html")
        [doc] = worker.load(tmp_path / "ok.html")
        assert doc.title == "Visiting Harbor Clinic"
    finally:
        worker.close()
