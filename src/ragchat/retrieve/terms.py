"""Words, stems and stopwords: the vocabulary shared by retrieval's section signal and the
offline agents (which re-export these from ``agents.heuristics._text``), kept in ``retrieve/``
so that retrieval never imports the agents."""

from __future__ import annotations

import re
from functools import lru_cache

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")


# Deliberately tiny: function words only, so medical and topical words always count.
def wordset(text: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words of ``text`` (for readable word lists)."""
    return frozenset(text.split())


STOPWORDS = wordset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else even
    ever every for from further get gets got had has have having he her here hers him his how
    i i'm if in into is it it's its itself just let me might more most much must my no nor not
    now of off on once only or other our out over own per please same she should so some such
    than that the their them then there these they this those through to too under until up
    upon us very was we were what what's when where whether which while who whom whose why will
    with within without would yet you your yours"""
)

# The number words, in order (a word's index is its value): the one list every English
# matcher of counts and values builds from.
NUMBER_WORDS: tuple[str, ...] = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
)  # fmt: skip
# "one|two|…|twelve", for regular expressions.
NUMBER_WORD_PATTERN = "|".join(NUMBER_WORDS[1:])

# What an "it" with no referent is ("if it's icy", "is it raining?", "it gets dark early"): the
# weather and the time of day, never a thing talked about.
IMPERSONAL = wordset("raining snowing icy frosty foggy windy stormy sunny freezing dark late")

# Words every question uses; they say little about what it is about.
GENERIC_WORDS = wordset(
    """take taking took use using used get give need help make know tell want good bad much
    many common usual usually normal normally really thing things way ok okay like should
    best safe well also"""
) | frozenset(NUMBER_WORDS[1:11])

try:  # PyStemmer is a ragchat dependency; keep a crude fallback anyway.
    import Stemmer

    _STEMMER = Stemmer.Stemmer("english")

    def _stem_impl(word: str) -> str:
        return str(_STEMMER.stemWord(word))

except ImportError:  # pragma: no cover

    def _stem_impl(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s"):
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                return word[: -len(suffix)]
        return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stem_impl(word.lower().replace("’", "'"))


WEAK_STEMS = frozenset(stem(w) for w in GENERIC_WORDS)


def words(text: str) -> list[str]:
    """Word tokens (letters, digits, inner apostrophes/hyphens) in their original case."""
    return [w.strip("'’-") for w in WORD.findall(text) if w.strip("'’-")]


def content_words(text: str) -> list[str]:
    """Lower-cased non-stopword tokens of 2+ characters (numbers kept: doses matter)."""
    out = []
    for w in words(text):
        low = w.lower().replace("’", "'")
        if low not in STOPWORDS and (len(low) >= 2 or low.isdigit()):
            out.append(low)
    return out


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}
