from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ragchat.errors import IngestError
from ragchat.ingest.jsonl import JsonlLoader

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact" / "corpus.jsonl"


def write_records(path: Path, records: list[dict[str, object]]) -> list[bytes]:
    lines = [json.dumps(r).encode() for r in records]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return lines


def test_one_document_per_record(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    lines = write_records(
        path,
        [
            {"_id": "d1", "title": "Aspirin", "text": "Aspirin reduces fever.", "metadata": {}},
            {"_id": 42, "title": "", "text": "Untitled record."},
        ],
    )
    first, second = JsonlLoader().load(path)
    assert first.doc_id == hashlib.sha256(lines[0]).hexdigest()
    assert first.source == f"{path}#d1"
    assert first.kind == "jsonl"
    assert first.title == "Aspirin"
    assert first.metadata == {"corpus_id": "d1", "title": "Aspirin"}
    assert [(s.locator, s.text) for s in first.sections] == [
        ("r0", "Aspirin\nAspirin reduces fever.")
    ]
    assert second.source == f"{path}#42"
    assert second.metadata["corpus_id"] == "42"
    assert second.sections[0].text == "Untitled record."


def test_record_metadata_is_kept_but_cannot_override_ids(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_records(
        path,
        [{"_id": "x", "title": "T", "text": "b", "metadata": {"year": 2020, "corpus_id": "y"}}],
    )
    [doc] = JsonlLoader().load(path)
    assert doc.metadata == {"year": 2020, "corpus_id": "x", "title": "T"}


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'\n{"_id": "a", "text": "x"}\r\n\n{"_id": "b", "text": "y"}')
    assert [d.metadata["corpus_id"] for d in JsonlLoader().load(path)] == ["a", "b"]


@pytest.mark.parametrize(
    ("second_line", "message"),
    [("{not json", "line 2: invalid JSON"), ('{"title": "no id"}', "line 2: record has no '_id'")],
)
def test_bad_line_raises_naming_file_and_line(
    tmp_path: Path, second_line: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"_id": "ok", "text": "fine"}\n' + second_line + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=message) as info:
        JsonlLoader().load(path)
    assert info.value.source == str(path)


@pytest.mark.skipif(not SCIFACT.exists(), reason="shared SciFact corpus not present")
def test_scifact_corpus_loads_whole() -> None:
    # Speed is measured by benchmarks, not asserted here (shared machines are noisy).
    docs = JsonlLoader().load(SCIFACT)
    assert len(docs) == 5183
    assert len({d.metadata["corpus_id"] for d in docs}) == 5183
