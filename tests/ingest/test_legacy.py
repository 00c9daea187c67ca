"""Old Office files converted by LibreOffice and read like the new formats (skipped without
LibreOffice, which the test itself uses to write the old files)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.ingest import samples

from ragchat.errors import IngestError
from ragchat.ingest import legacy
from ragchat.ingest.pipeline import load_file

needs_soffice = pytest.mark.skipif(
    legacy.soffice() is None, reason="LibreOffice not installed: scripts/office-deps"
)


def _old(tmp_path: Path, writer: Callable[[Path], None], name: str) -> Path:
    """A sample written in the new format, saved by LibreOffice in the old one."""
    new = tmp_path / "new" / name
    new.parent.mkdir(parents=True)
    writer(new)
    old = {".docx": "doc", ".xlsx": "xls", ".pptx": "ppt"}[new.suffix]
    profile = (tmp_path / "profile").as_uri()
    subprocess.run(
        [
            str(legacy.soffice()),
            "--headless",
            f"-env:UserInstallation={profile}",
            "--convert-to",
            old,
            "--outdir",
            str(tmp_path),
            str(new),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return tmp_path / f"{new.stem}.{old}"


@needs_soffice
def test_an_old_word_file_keeps_its_headings_and_table_rows(tmp_path: Path) -> None:
    path = _old(tmp_path, samples.write_docx, "handbook.docx")
    [doc] = load_file(path)
    assert doc.metadata["format"] == "doc" and doc.source == str(path)
    opening = next(s for s in doc.sections if s.metadata.get("heading") == "Opening hours")
    assert "7:30" in opening.text
    [fees] = [s for s in doc.sections if s.table]
    assert "Service: Consultation; Price: 45 EUR" in fees.text


@needs_soffice
def test_old_sheets_and_slides(tmp_path: Path) -> None:
    [sheet] = load_file(_old(tmp_path / "x", samples.write_xlsx, "formulary.xlsx"))
    assert any("Drug: Ibuprofen; Adult dose: 400 mg" in s.text for s in sheet.sections)
    [deck] = load_file(_old(tmp_path / "p", samples.write_pptx, "deck.pptx"))
    assert deck.metadata["format"] == "ppt" and deck.sections[1].metadata["slide"] == 2


def test_a_renamed_file_or_no_libreoffice_fails_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "notes.doc"
    fake.write_text("just text")
    with pytest.raises(IngestError, match="not a Word 97-2003 document"):
        load_file(fake)
    monkeypatch.setattr(legacy, "soffice", lambda: None)
    real = tmp_path / "old.xls"
    real.write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + bytes(500))
    with pytest.raises(IngestError, match="scripts/office-deps"):
        load_file(real)


@needs_soffice
def test_a_conversion_past_its_time_is_stopped_with_everything_it_started(
    tmp_path: Path,
) -> None:
    path = _old(tmp_path / "x", samples.write_docx, "handbook.docx")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(IngestError, match=r"took longer than 0\.2 s"):
        legacy.convert(path, work, str(legacy.soffice()), timeout_s=0.2)
    leftover = subprocess.run(
        ["pgrep", "-f", f"UserInstallation={(work / 'profile').as_uri()}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert leftover.stdout.strip() == ""
