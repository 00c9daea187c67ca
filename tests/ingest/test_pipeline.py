from __future__ import annotations

from pathlib import Path

from ragchat.errors import IngestError, UnsupportedFileError
from ragchat.ingest.pipeline import load_paths


def test_load_paths_continues_past_bad_files_and_reports_them(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    (tmp_path / "b.pdf").write_bytes(b"%PDF-1.4 truncated")
    (tmp_path / "c.txt").write_text("gamma\n", encoding="utf-8")
    (tmp_path / "d.jsonl").write_text('{"_id": "1", "text": "x"}\n{oops\n', encoding="utf-8")
    unsupported = tmp_path / "notes.odt"
    unsupported.write_bytes(b"PK")
    missing = tmp_path / "missing.md"
    seen: list[IngestError] = []

    docs, errors = load_paths([tmp_path, unsupported, missing], on_error=seen.append)

    assert [d.source for d in docs] == [str(tmp_path / "a.md"), str(tmp_path / "c.txt")]
    assert [e.source for e in errors] == [
        str(unsupported),
        str(missing),
        str(tmp_path / "b.pdf"),
        str(tmp_path / "d.jsonl"),
    ]
    assert isinstance(errors[0], UnsupportedFileError)
    assert "line 2" in errors[3].reason
    assert seen == errors


def test_load_paths_without_errors(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hello", encoding="utf-8")
    docs, errors = load_paths([tmp_path])
    assert errors == []
    assert [d.title for d in docs] == ["x"]
