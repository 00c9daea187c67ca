from __future__ import annotations

import hashlib
from pathlib import Path

from ragchat.ingest.text import TextLoader


def test_paragraphs_are_kept_in_one_section(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    data = "First   paragraph\nstill first.\n\n\n\n  Second paragraph.  \r\n\r\nThird.\n"
    path.write_bytes(data.encode())
    [doc] = TextLoader().load(path)
    assert doc.kind == "text"
    assert doc.title == "notes"
    assert doc.source == str(path)
    assert doc.doc_id == hashlib.sha256(data.encode()).hexdigest()
    assert [(s.locator, s.text) for s in doc.sections] == [
        ("s0", "First paragraph\nstill first.\n\nSecond paragraph.\n\nThird.")
    ]
    assert doc.warnings == ()


def test_empty_file_gives_no_sections_and_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("  \n\n ", encoding="utf-8")
    [doc] = TextLoader().load(path)
    assert doc.sections == ()
    assert doc.warnings == ("empty file: nothing to index",)


def test_invalid_utf8_is_replaced_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("café au lait".encode("latin-1"))
    [doc] = TextLoader().load(path)
    assert doc.sections[0].text == "caf\ufffd au lait"
    assert len(doc.warnings) == 1
    assert "UTF-8" in doc.warnings[0]
