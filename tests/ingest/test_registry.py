from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.errors import UnsupportedFileError
from ragchat.ingest.base import Loader
from ragchat.ingest.jsonl import JsonlLoader
from ragchat.ingest.markdown import MarkdownLoader
from ragchat.ingest.pdf import PdfLoader
from ragchat.ingest.registry import LOADERS, iter_files, loader_for
from ragchat.ingest.text import TextLoader
from ragchat.ingest.vtt import VttLoader


def test_every_supported_suffix_has_a_protocol_loader() -> None:
    assert sorted(LOADERS) == [
        *(".csv", ".doc", ".docx", ".epub", ".htm", ".html", ".jpeg", ".jpg", ".jsonl"),
        *(".markdown", ".md", ".pdf", ".png", ".ppt", ".pptx", ".tif", ".tiff", ".tsv"),
        *(".txt", ".vtt", ".xhtml", ".xls", ".xlsm", ".xlsx"),
    ]
    assert all(isinstance(loader, Loader) for loader in LOADERS.values())


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a.pdf", PdfLoader),
        ("a.md", MarkdownLoader),
        ("a.MARKDOWN", MarkdownLoader),
        ("a.vtt", VttLoader),
        ("a.txt", TextLoader),
        ("a.jsonl", JsonlLoader),
    ],
)
def test_loader_for_picks_by_suffix_case_insensitively(name: str, kind: type) -> None:
    assert isinstance(loader_for(Path(name)), kind)


@pytest.mark.parametrize("name", ["a.odt", "a.wpd", "Makefile"])
def test_unknown_suffix_raises(name: str) -> None:
    with pytest.raises(UnsupportedFileError) as info:
        loader_for(Path(name))
    assert info.value.source == name


def test_iter_files_recurses_sorted_and_skips_hidden_and_unsupported(tmp_path: Path) -> None:
    for rel in [
        "b.md",
        "a.txt",
        "sub/z.vtt",
        "sub/deeper/c.pdf",
        "sub/image.bmp",
        ".hidden.md",
        ".git/config.txt",
        "sub/.cache/x.md",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x", encoding="utf-8")
    extra = tmp_path / "sub" / "z.vtt"
    found = iter_files([tmp_path, extra])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.txt",
        "b.md",
        "sub/deeper/c.pdf",
        "sub/z.vtt",
    ]


def test_iter_files_keeps_explicit_supported_files_only(tmp_path: Path) -> None:
    keep = tmp_path / "keep.md"
    drop = tmp_path / "drop.odt"
    for p in (keep, drop):
        p.write_text("x", encoding="utf-8")
    assert iter_files([drop, keep]) == [keep]
