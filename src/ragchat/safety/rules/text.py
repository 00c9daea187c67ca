"""What every rule is written against: ``normalise`` (lower case, NFKC, straight
apostrophes, zero-width characters removed, whitespace collapsed), the ``Rule`` type and
``_rx``. Shared by the category modules and the matcher."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_ZERO_WIDTH = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff]")
_SPACE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "`": "'", "\u00b4": "'", "\u201c": '"', "\u201d": '"'}
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _ZERO_WIDTH.sub("", text).translate(_APOSTROPHES)
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Rule:
    category: str
    name: str
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None

    def matches(self, normalised: str) -> bool:
        if not self.pattern.search(normalised):
            return False
        return not (self.unless and self.unless.search(normalised))


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)
