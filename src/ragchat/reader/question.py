"""One analysis of the question per turn: what the reader, its features and its checks need to
know about what was asked, computed once and carried with the turn's answer request."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ragchat.reader import ranges
from ragchat.reader.answer_types import Wanted, wanted
from ragchat.reader.coverage import key_terms
from ragchat.retrieve.sections import question_aspects
from ragchat.retrieve.terms import content_stems, stem, words

_YES_NO = re.compile(
    r"^\s*(?:and\s+)?(?:is|are|can|could|does|do|should|will|may|am|was|were)\b", re.IGNORECASE
)
_CODE = re.compile(r"\b(?=[A-Za-z-]*\d)[A-Za-z0-9][A-Za-z0-9./:-]*\b")
# Answer kinds, as numbers the scorer reads (``Question.kind``).
KINDS = ("any", "number", "date", "name", "place", "steps")


@lru_cache(maxsize=50_000)
def zipf(word: str) -> float:
    """How common ``word`` is in everyday English (Zipf scale 0–8; 0 when unknown)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word.lower(), "en"))


def specific(word: str) -> bool:
    """A word that names what the question is about: a name, a code or number, or a word
    that is not everyday English."""
    return word[:1].isupper() or any(c.isdigit() for c in word) or zipf(word) < 4.6


@dataclass(frozen=True)
class Question:
    text: str  # the standalone question (what was searched)
    message: str  # what the user typed
    previous: str = ""  # the user's previous message in the conversation
    stems: frozenset[str] = frozenset()
    key: frozenset[str] = frozenset()  # stems a reply must account for
    specific: frozenset[str] = frozenset()  # stems of its specific words
    codes: tuple[str, ...] = ()  # numbers and codes it names ("E24", "26", "SH2471")
    kind: str = "any"
    wanted: Wanted = field(default_factory=Wanted)
    values: tuple[tuple[float, str], ...] = ()  # the user's own values ("2 years")
    aspects: frozenset[str] = frozenset()
    yes_no: bool = False

    @property
    def follow_up(self) -> bool:
        return self.text.strip() != self.message.strip()


def _kind(want: Wanted) -> str:
    from ragchat.reader import answer_types as at

    if want.steps:
        return "steps"
    return {
        id(at._DATE): "date",
        id(at._NAME): "name",
        id(at._PLACE): "place",
        id(at._NUMBER): "number",
    }.get(id(want.pattern), "any")


def analyse(text: str, message: str | None = None, previous: str = "") -> Question:
    message = text if message is None else message
    key, _ = key_terms(text)
    spec = frozenset(stem(w) for w in words(text) if specific(w) and stem(w) in key)
    want = wanted(text)
    return Question(
        text=text,
        message=message,
        previous=previous,
        stems=frozenset(content_stems(text)),
        key=frozenset(key),
        specific=spec,
        codes=tuple(dict.fromkeys(m.lower() for m in _CODE.findall(text))),
        kind=_kind(want),
        wanted=want,
        values=tuple(ranges.values(text)),
        aspects=question_aspects(text),
        yes_no=bool(_YES_NO.match(text)),
    )
