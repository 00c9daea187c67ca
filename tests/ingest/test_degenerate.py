"""Degenerate text fails its file alone, with the reason (ingest.degenerate)."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from ragchat.errors import IngestError
from ragchat.ingest.pipeline import load_file, load_paths
from ragchat.ingest.sandbox import ParseLimits, parse_file

CASES = {
    "one-line.csv": (",".join(f"value{i}" for i in range(30_000)), "one line of"),
    "blob.txt": (
        "\n".join(base64.b64encode(random.Random(i).randbytes(60)).decode() for i in range(200)),
        "no word boundaries",
    ),
    "binary.txt": (bytes(random.Random(1).randbytes(20_000)), "mostly not text"),
    "log.txt": ("ERROR connection refused\n" * 3000 + "one real line\n", "repeated 3,000 times"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_degenerate_file_fails_with_its_reason(tmp_path: Path, name: str) -> None:
    content, reason = CASES[name]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(IngestError, match=reason):
        load_file(path)
    with pytest.raises(IngestError, match=reason):  # the upload sandbox's check too
        parse_file(path, ParseLimits())


def test_it_fails_alone_and_honest_text_passes(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("same line\n" * 2000)
    (tmp_path / "notes.txt").write_text("Quokkas eat leaves.\n" * 20 + "没有空格的中文文本" * 400)
    docs, errors = load_paths([tmp_path])
    assert [d.source for d in docs] == [str(tmp_path / "notes.txt")]
    assert [e.source for e in errors] == [str(tmp_path / "log.txt")]
