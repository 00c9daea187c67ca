"""Which table row's range holds the question's number: "I've worked here 2 years" is the
"1 to 5 years" row, "a child weighing 30 kg" the "less than 40 kg" one. Tables of entitlements,
doses and fees are keyed by bands, and a user names their own value, not the band."""

from __future__ import annotations

import re

from ragchat.reader.text import stem
from ragchat.retrieve.terms import NUMBER_WORDS

_NUMBER_WORDS = {w: n for n, w in enumerate(NUMBER_WORDS)}
_NUM = r"(\d+(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"\s*([a-z]+)"
# A value the user gives: "2 years", "30 kg", "three months".
_VALUE = re.compile(rf"\b{_NUM}{_UNIT}", re.IGNORECASE)
# A band in a row: (low, high) with None for an open end, and its unit.
_BANDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kind)
    for pattern, kind in (
        (rf"\b{_NUM}\s*(?:to|-|–|and)\s*{_NUM}{_UNIT}", "between"),
        (rf"\b(?:less than|under|below|up to|fewer than)\s+{_NUM}{_UNIT}", "below"),
        (rf"\b(?:more than|over|above|at least)\s+{_NUM}{_UNIT}", "above"),
        (rf"\b{_NUM}{_UNIT}\s+or more\b", "from"),
    )
)


def _number(text: str) -> float:
    return float(_NUMBER_WORDS.get(text.lower(), text))


def _unit(word: str) -> str:
    return stem(word.lower())


def values(text: str) -> list[tuple[float, str]]:
    """The numbers with units a question gives ("2 years" → (2.0, "year"))."""
    return [(_number(n), _unit(u)) for n, u in _VALUE.findall(text)]


def holds(text: str, asked: list[tuple[float, str]]) -> bool:
    """Whether a band of ``text`` (a table row) holds one of the ``asked`` values, unit alike."""
    for pattern, kind in _BANDS:
        for m in pattern.finditer(text):
            groups = m.groups()
            unit = _unit(groups[-1])
            bounds = [_number(g) for g in groups[:-1]]
            for value, value_unit in asked:
                if value_unit != unit:
                    continue
                if kind == "between" and bounds[0] <= value <= bounds[1]:
                    return True
                if kind == "below" and value < bounds[0]:
                    return True
                if kind == "above" and value > bounds[0]:
                    return True
                if kind == "from" and value >= bounds[0]:
                    return True
    return False
