from __future__ import annotations

import datetime as dt
import random

import pytest

from ragchat.ingest.text_utils import (
    format_ts,
    json_safe,
    normalize_with_map,
    normalize_ws,
)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "00:00:00.000"),
        (7.25, "00:00:07.250"),
        (3661.0015, "01:01:01.002"),
        (59.9999, "00:01:00.000"),
    ],
)
def test_format_ts(seconds: float, expected: str) -> None:
    assert format_ts(seconds) == expected


def test_normalize_keeps_paragraphs_and_collapses_spaces() -> None:
    assert normalize_ws("  a \t b \r\n\n\n\n c  \n d ") == "a b\n\nc\nd"


def test_normalize_with_map_matches_normalize_and_maps_back() -> None:
    rng = random.Random(7)
    alphabet = ["a", "b", " ", "\n", "\t", "\r", "\r\n", "\xa0", "."]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        norm, index = normalize_with_map(text)
        assert norm == normalize_ws(text)
        assert len(index) == len(norm)
        assert index == sorted(index)
        for ch, i in zip(norm, index, strict=True):
            assert ch == text[i] or (ch in " \n" and text[i].isspace())


def test_json_safe_converts_dates_and_unknown_objects() -> None:
    value = {"d": dt.date(2024, 1, 2), "n": [1, (2, 3)], 4: "x", "o": object}
    safe = json_safe(value)
    assert safe["d"] == "2024-01-02"
    assert safe["n"] == [1, [2, 3]]
    assert safe["4"] == "x"
    assert isinstance(safe["o"], str)
