"""What an upload job tells its uploader never holds a server path."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.api.services.job_result import redact


def test_paths_become_file_names_and_the_data_directory_goes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    upload = data / "uploads" / "notes" / "0b4e-user-id" / "notes.md"
    text = f"cannot index {upload}: bad; see {data}/kb/notes/manifest.json and {data}"
    assert redact(text, [upload], data) == (
        "cannot index notes.md: bad; see kb/notes/manifest.json and "
    )


def test_a_relative_data_directory_keeps_the_dots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert redact("version 1.2 failed.", [], Path(".")) == "version 1.2 failed."
