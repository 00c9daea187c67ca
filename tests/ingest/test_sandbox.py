"""Crafted files are parsed in a child process under a time and a memory limit: each fails on
its own with a clear reason, fast, and the next file parses as usual."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragchat.errors import IngestCancelled, IngestError
from ragchat.ingest.sandbox import ParseLimits, ParseWorker, parse_file

LIMITS = ParseLimits(timeout_s=3.0, memory_mb=400, max_chars=100_000, max_pages=500)


@pytest.fixture
def worker() -> Iterator[ParseWorker]:
    parser = ParseWorker(LIMITS)
    yield parser
    parser.close()


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _fails(worker: ParseWorker, path: Path) -> str:
    """The reason ``path`` fails. Liveness only (no speed target): the file's time limit
    plus a start-up margin, where unbounded the same file holds a worker for seconds to
    minutes."""
    start = time.monotonic()
    with pytest.raises(IngestError) as caught:
        worker.load(path)
    assert caught.value.source == str(path)
    assert str(path.parent) not in caught.value.reason  # no server path in the reason
    assert time.monotonic() - start < (worker.limits.timeout_s or 0) + 15.0
    return caught.value.reason


def test_a_good_file_parses_in_the_child(worker: ParseWorker, tmp_path: Path) -> None:
    path = _write(tmp_path, "note.md", b"# Quokkas\n\nQuokkas eat leaves.\n")
    [doc] = worker.load(path)
    assert doc.title == "Quokkas" and "leaves" in doc.sections[0].text
    assert worker.load(path)[0].doc_id == doc.doc_id  # the child is kept for the next file


def test_an_endless_content_stream_is_stopped_at_the_time_limit(
    worker: ParseWorker, tmp_path: Path, crafted: object
) -> None:
    pdf = crafted.endless_text()  # type: ignore[attr-defined]
    assert len(pdf) < 100_000
    reason = _fails(worker, _write(tmp_path, "endless.pdf", pdf))
    assert reason == "parsing took longer than 3 s (the limit per file)"
    good = _write(tmp_path, "after.txt", b"The next file parses in a new child.")
    assert worker.load(good)[0].sections[0].text == "The next file parses in a new child."


def test_a_decompression_bomb_stays_under_the_memory_limit(
    worker: ParseWorker, tmp_path: Path, crafted: object
) -> None:
    pdf = crafted.bomb(megabytes=600)  # type: ignore[attr-defined]
    assert len(pdf) < 1_000_000
    reason = _fails(worker, _write(tmp_path, "bomb.pdf", pdf))
    # pypdf's own output cap, the child's address-space cap, or its death: a clear failure.
    assert "memory" in reason or "corrupt PDF" in reason or "took longer" in reason, reason


def test_a_file_needing_more_memory_than_allowed_fails_alone(tmp_path: Path) -> None:
    """The child's address space is capped: 21 MB of text needs more than 150 MB to parse."""
    path = _write(tmp_path, "big.txt", b"quokka " * 3_000_000)
    small = ParseWorker(ParseLimits(timeout_s=60, memory_mb=150))
    try:
        reason = _fails(small, path)
        assert reason == "parsing it needs more memory than allowed"
        assert small.load(_write(tmp_path, "small.txt", b"fits"))[0].sections[0].text == "fits"
    finally:
        small.close()


def test_a_parser_that_dies_fails_its_file_only(tmp_path: Path) -> None:
    """A child that cannot even take the file in (here: 1 MB of address space) dies; the
    file fails with a reason and the parent carries on."""
    tiny = ParseWorker(ParseLimits(timeout_s=60, memory_mb=1))
    try:
        reason = _fails(tiny, _write(tmp_path, "a.txt", b"x" * 2_000_000))
        # Whether the child dies or still catches its MemoryError depends on how much free
        # heap it has left from its imports: either way the file fails with a clear reason.
        assert reason in (
            "the parser stopped (the file needs more memory than allowed?)",
            "parsing it needs more memory than allowed",
        )
    finally:
        tiny.close()


def test_deep_nesting_fails_with_a_clear_reason(
    worker: ParseWorker, tmp_path: Path, crafted: object
) -> None:
    reason = _fails(worker, _write(tmp_path, "deep.pdf", crafted.nested()))  # type: ignore[attr-defined]
    assert reason == "corrupt PDF (objects nested too deeply)"


def test_a_huge_page_count_is_refused(worker: ParseWorker, tmp_path: Path, crafted: object) -> None:
    pdf = crafted.fractal(fanout=10, depth=4)  # type: ignore[attr-defined]
    assert len(pdf) < 2_000
    reason = _fails(worker, _write(tmp_path, "pages.pdf", pdf))
    assert reason == "too many pages (10000; at most 500 per PDF)"
    million = crafted.fractal(fanout=10, depth=6)  # type: ignore[attr-defined]
    reason = _fails(worker, _write(tmp_path, "million.pdf", million))
    assert reason.startswith("corrupt PDF (LimitReachedError: Maximum page tree entry limit")


def test_text_over_the_cap_fails_the_file(worker: ParseWorker, tmp_path: Path) -> None:
    path = _write(tmp_path, "big.txt", b"word " * 30_000)  # 150,000 characters
    reason = _fails(worker, path)
    assert reason == "too much text: over 100,000 characters extracted (the limit per file)"


def test_json_nested_200000_levels_fails_alone(tmp_path: Path) -> None:
    deep = b'{"_id": "x", "text": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    path = _write(tmp_path, "deep.jsonl", b'{"_id": "a", "text": "fine"}\n' + deep)
    with pytest.raises(IngestError, match="line 2: JSON nested too deeply"):
        parse_file(path, ParseLimits())


def test_cancel_stops_a_parse_at_once(worker: ParseWorker, tmp_path: Path, crafted: object) -> None:
    slow = ParseWorker(ParseLimits(timeout_s=600))
    path = _write(tmp_path, "endless.pdf", crafted.endless_text())  # type: ignore[attr-defined]
    threading.Timer(1.0, slow.cancel).start()
    start = time.monotonic()
    with pytest.raises(IngestCancelled):
        slow.load(path)
    assert time.monotonic() - start < 1.0 + 15.0  # liveness: unbounded it runs 12 s
    with pytest.raises(IngestCancelled):  # and nothing starts after it
        slow.load(_write(tmp_path, "a.txt", b"text"))
    slow.close()


def test_the_parser_gets_none_of_the_servers_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crafted file exploiting the parser finds no API key or database URL around it."""
    monkeypatch.setenv("RAGCHAT_LLM__API_KEY", "sk-canary")
    path = _write(tmp_path, "env.jsonl", b'{"_id": "1", "text": "probe"}\n')
    probe = ParseWorker(ParseLimits(timeout_s=60))
    try:
        probe.load(path)  # starts the child with the environment as it is now
        assert probe._proc is not None
        environ = Path(f"/proc/{probe._proc.pid}/environ").read_bytes()
    finally:
        probe.close()
    assert b"sk-canary" not in environ and b"RAGCHAT_" not in environ
