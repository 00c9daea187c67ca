"""The office, web and e-book loaders on sample files written with the libraries that read
them (``tests/ingest/samples.py``): structure kept, and every chunk cites the right place."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ingest import samples

from ragchat.errors import IngestError, UnsupportedFileError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.pipeline import load_file
from ragchat.ingest.registry import iter_files, unsupported_files
from ragchat.settings import ChunkingSettings
from ragchat.types import Chunk, Hit, LoadedDocument, citation_from_hit


def _load(tmp_path: Path, name: str) -> LoadedDocument:
    sample = next(s for s in samples.SAMPLES if s.name == name)
    path = tmp_path / name
    sample.write(path)
    [doc] = load_file(path)
    return doc


def _chunks(doc: LoadedDocument) -> list[Chunk]:
    return [c for c in Chunker(ChunkingSettings()).chunk(doc) if not c.is_parent]


def _find(chunks: list[Chunk], text: str) -> Chunk:
    return next(c for c in chunks if text in c.text)


def test_word_sections_carry_heading_paths_and_tables_become_rows(tmp_path: Path) -> None:
    doc = _load(tmp_path, "handbook.docx")
    assert doc.kind == "docx" and doc.title == "Harbor Clinic handbook"
    chunks = _chunks(doc)
    assert _find(chunks, "nurse Okafor").location() == "Vaccinations > Children"
    fees = _find(chunks, "Blood test")
    assert "Service: Blood test; Price: 28 EUR; Duration: 10 minutes; Notes: Results" in fees.text
    assert fees.metadata["heading_path"] == ["Fees"] and fees.metadata["table"] is True
    # A heading with nothing under it is no chunk of its own.
    assert all(c.text.strip() != "Vaccinations" for c in chunks)


def test_slides_are_cited_by_number_and_title(tmp_path: Path) -> None:
    doc = _load(tmp_path, "review.pptx")
    assert doc.kind == "pptx" and doc.metadata["slides"] == 6
    chunks = _chunks(doc)
    assert _find(chunks, "11 minutes").location() == "slide 3 — Waiting times"
    staffing = _find(chunks, "Site: Dock Street; Doctors: 6; Nurses: 11.")
    assert staffing.location() == "slide 6 — Staffing by site"
    assert "Hill Road hires two nurses" in _find(chunks, "Speaker notes").text
    citation = citation_from_hit(Hit(chunk=staffing, score=1.0), 1).to_dict()
    assert citation["slide"] == 6 and citation["location"] == "slide 6 — Staffing by site"


def test_spreadsheet_rows_cite_sheet_and_row_numbers(tmp_path: Path) -> None:
    doc = _load(tmp_path, "formulary.xlsx")
    assert doc.kind == "spreadsheet" and doc.metadata["sheets"] == ["Formulary", "Staff"]
    chunks = _chunks(doc)
    ibuprofen = _find(chunks, "Drug: Ibuprofen;")
    assert (
        "Drug: Ibuprofen; Adult dose: 400 mg; Frequency: every 6 hours; Max per day: 1200 mg"
        in (ibuprofen.text)
    )
    a, b = ibuprofen.metadata["rows"]
    assert a <= 5 <= b and ibuprofen.location() == f"Formulary, rows {a}–{b}"
    assert _find(chunks, "reviewed March").location() == "Formulary"
    staff = _find(chunks, "Mei Tanaka")
    assert staff.location() == "Staff, rows 2–4"
    citation = citation_from_hit(Hit(chunk=staff, score=1.0), 1).to_dict()
    assert citation["sheet"] == "Staff" and citation["rows"] == [2, 4]
    # A row never straddles two chunks.
    rows = [line for c in chunks for line in c.text.split("\n") if line.startswith("Drug:")]
    assert len(rows) == len(samples.FORMULARY) + 40 and len(set(rows)) == len(rows)


def test_csv_rows(tmp_path: Path) -> None:
    doc = _load(tmp_path, "rooms.csv")
    [chunk] = _chunks(doc)
    assert chunk.text.split("\n")[1] == "Room: B7; Floor: 2; Equipment: Ultrasound; Bookable: yes."
    assert chunk.location() == "rows 2–5"


def test_semicolon_csv_and_one_column_sheets(tmp_path: Path) -> None:
    path = tmp_path / "names.csv"
    path.write_text("Name;Town\nAda;Oslo\nBo;Rome\n", encoding="utf-8")
    [doc] = load_file(path)
    assert doc.sections[0].text == "Name: Ada; Town: Oslo.\nName: Bo; Town: Rome."
    one = tmp_path / "one.csv"
    one.write_text("Fruit\n" + "".join(f"fruit{i}\n" for i in range(30)), encoding="utf-8")
    [doc] = load_file(one)
    [table] = doc.sections
    assert table.text.split("\n")[:2] == ["Fruit: fruit0.", "Fruit: fruit1."]
    assert table.row_numbers[:2] == (2, 3)


def test_html_keeps_content_and_heading_path_and_drops_boilerplate(tmp_path: Path) -> None:
    doc = _load(tmp_path, "visiting.html")
    assert doc.kind == "html" and doc.title == "Visiting Harbor Clinic"
    text = "\n".join(s.text for s in doc.sections)
    for boilerplate in ("News", "Cookie settings", "do not index me"):
        assert boilerplate not in text
    chunks = _chunks(doc)
    assert _find(chunks, "line 42").location() == "Visiting Harbor Clinic > Getting here > By bus"
    ward = _find(chunks, "Ward: Cardiology; Floor: 2; Phone: 0301 555 0122.")
    assert ward.metadata["heading_path"][-1] == "Ward phone numbers"


def test_html_in_another_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin.html"
    html = '<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head>'
    path.write_bytes((html + "<body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>").encode("latin-1"))
    [doc] = load_file(path)
    assert doc.title == "Café" and doc.sections[0].text == "Crème brûlée"


def test_epub_chapters_in_reading_order(tmp_path: Path) -> None:
    doc = _load(tmp_path, "guide.epub")
    assert doc.kind == "epub" and doc.title == "Harbor patient guide"
    assert doc.metadata["chapters"] == 4
    chunks = _chunks(doc)
    sleep = _find(chunks, "seven to nine hours")
    assert sleep.metadata["chapter"] == 3 and sleep.metadata["chapter_title"] == "Healthy sleep"
    assert sleep.location() == "Healthy sleep"
    assert citation_from_hit(Hit(chunk=sleep, score=1.0), 1).chapter == "3"


def test_damaged_office_files_fail_alone_with_a_reason(tmp_path: Path) -> None:
    for name in ("a.docx", "b.pptx", "c.xlsx", "d.epub"):
        (tmp_path / name).write_bytes(b"PK\x03\x04 not really a zip")
    good = tmp_path / "rooms.csv"
    samples.write_csv(good)
    for name in ("a.docx", "b.pptx", "c.xlsx", "d.epub"):
        with pytest.raises(IngestError, match="damaged zip container"):
            load_file(tmp_path / name)
    assert load_file(good)


def test_unsupported_files_are_named_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "notes.odt").write_bytes(b"x")
    (tmp_path / "ok.md").write_text("# ok\n\ntext\n", encoding="utf-8")
    (tmp_path / ".hidden.bin").write_bytes(b"x")
    [bad] = unsupported_files([tmp_path])
    assert isinstance(bad, UnsupportedFileError) and bad.source.endswith("notes.odt")
    assert "'.odt'" in str(bad) and ".docx" in str(bad) and "Word" in str(bad)
    assert [p.name for p in iter_files([tmp_path])] == ["ok.md"]


def test_word_merged_and_nested_cells_stay_under_their_columns(tmp_path: Path) -> None:
    import docx

    doc = docx.Document()
    table = doc.add_table(rows=3, cols=3)
    for i, name in enumerate(("Ward", "Floor", "Phone")):
        table.cell(0, i).text = name
    table.cell(1, 0).merge(table.cell(1, 1)).text = "Maternity, floor 4"
    table.cell(1, 2).text = "0140"
    inner = table.cell(2, 0).add_table(rows=1, cols=2)
    inner.cell(0, 0).text = "Cardiology"
    inner.cell(0, 1).text = "annex"
    table.cell(2, 2).text = "0122"
    path = tmp_path / "wards.docx"
    doc.save(str(path))
    [loaded] = load_file(path)
    [section] = loaded.sections
    assert section.text.split("\n") == [
        "Ward: Maternity, floor 4; Phone: 0140.",
        "Ward: Cardiology annex; Phone: 0122.",
    ]
