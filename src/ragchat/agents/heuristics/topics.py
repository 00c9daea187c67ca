"""What a question is about, without an LLM: its topic (the longest run of topical words:
neither stopwords nor generic question vocabulary such as "side effects", "dose", "kids"),
what follows "about" when that names something, an error code it names ("E21"), and the
noun it asks about rather than the verb after "I" or the person in "my daughter". Used by
``reformulate`` (and ``topic`` by the composer)."""

from __future__ import annotations

import itertools
import re

from ragchat.agents.heuristics import referents
from ragchat.reader.text import STOPWORDS, words, wordset

# Question vocabulary that does not name a topic by itself.
GENERIC = wordset(
    """side effect effects dose doses dosage dosing take taking took use uses used using safe
    safety kid kids child children baby babies toddler toddlers adult adults teen teens teenager
    teenagers elderly people person someone everyone anyone pregnant pregnancy breastfeeding
    symptom symptoms sign signs cause causes caused risk risks treatment treatments treat treated
    benefit benefits interaction interactions trigger triggers type types work works worked long
    often much many amount time times day days daily week weeks maximum max minimum normal common
    usual usually good bad better best okay ok fine help helps need needs want know tell explain
    mean means happen happens happened start stop get give given go going come make doctor
    clinician pharmacist else instead alternative alternatives option options thing things stuff
    one ones way ways kind kinds also too really still ever again more less well exactly
    actually else work okay alright something anything everything question questions answer
    difference different same prevent prevention avoid feel feeling should could would
    apply applies affect affects learn learning read understand information info details
    genetic gene genes change changes mutation mutations involved inherited inheritance
    hereditary outlook prognosis stage stages complication complications diagnose diagnosed
    diagnosis frequency prevalence cure curable prevented contagious
    """
)
ATTRIBUTE_END = wordset(
    """effect effects dose doses dosage symptoms signs causes risks treatment treatments uses
    benefits interactions triggers types warning warnings"""
)
QUESTION_START = wordset(
    """what what's how how's when when's where where's why who who's which is are can could
    should does do did will would"""
)


_AGE = re.compile(r"(?:year|month|week|day)s?-olds?$")


def is_topical(word: str) -> bool:
    low = word.lower().replace("’", "'")
    return (
        low not in STOPWORDS
        and low not in GENERIC
        and low not in QUESTION_START
        and not low.isdigit()
        and len(low) > 1
        and low not in {"i'm", "i've", "i'd", "don't", "doesn't", "can't", "isn't"}
        and not _AGE.search(low)
    )


_NUMERAL = re.compile(r"^(?:\d+[a-z]?|[IVX]{1,4}|[A-Z])$")
# "learn about X", "tell me about X", "information on X": X is what the message is about.
# "learn about X", "tell me about X", "information on X": X is what the message is about,
# up to the end of the sentence ("15q13.3 microdeletion" keeps its inner dot).
_ABOUT_TOPIC = re.compile(
    r"\b(?:about|regarding|(?:information|info)\s+on)\s+(?P<rest>.+?)\s*(?:[?!.;:](?:\s|$)|$)",
    re.IGNORECASE,
)
_LEADING_DET = re.compile(r"^(?:the|a|an|my|our|your|this|that)\s+", re.IGNORECASE)
_TRAILING_POLITE = re.compile(r"[\s,]+(?:please|thanks|thank you)\s*$", re.IGNORECASE)
MAX_NAME_WORDS = 12


# "a gift from a client", "a letter by my GP": what comes after these names a source, not
# the thing asked about, so it loses a tie with another run.
_SOURCE = wordset("from by")


def _longest_run(text: str, *, source_loses_ties: bool = False, common: bool = False) -> str:
    """The longest run of topical words (see ``topic``); ``source_loses_ties``: a run after
    "from"/"by" loses a tie; ``common``: only runs without a capitalised word after the
    first ("dinner", not "UK trip")."""
    best: tuple[int, bool, int] = (0, False, 0)
    found: list[str] = []
    run: list[str] = []
    tokens = words(text)
    for i, w in enumerate([*tokens, ""]):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if w and (
            is_topical(w)
            or (run and (w.isdigit() or (run[-1].lower() == "type" and _NUMERAL.match(w))))
            or (w.lower() == "type" and bool(nxt) and _NUMERAL.match(nxt) is not None)
        ):
            run.append(w)
            continue
        proper = common and any(w[:1].isupper() for w in run) and i - len(run) > 0
        if run and not proper:
            before = tokens[max(0, i - len(run) - 2) : i - len(run)]
            source = source_loses_ties and any(b.lower() in _SOURCE for b in before)
            rank = (len(run), not source, len(" ".join(run)))
            if rank > best:
                best, found = rank, run
        run = []
    return " ".join(found)


def topic(text: str) -> str:
    """The main topic phrase of a question: its longest run of topical words; ties go to the
    longer phrase, then the first. A number continues a run, and "type" before a number or a
    numeral starts one ("type 2 diabetes", "glutaric acidemia type I")."""
    return _longest_run(text)


def _is_name(phrase: str) -> bool:
    """Whether a phrase after "about" names a thing rather than asks about an aspect of one:
    it does not end with an aspect ("type 2 diabetes treatment") nor hold "<aspect> of/for"
    ("the side effects of ibuprofen", "dosage for kids"); "Urinary Tract Infections in
    Children" and "hereditary angioedema" are names."""
    tokens = [w.lower() for w in words(phrase)]
    if not 0 < len(tokens) <= MAX_NAME_WORDS or tokens[-1] in ATTRIBUTE_END:
        return False
    if not any(is_topical(t) for t in tokens):
        return False
    pairs = itertools.pairwise(tokens)
    return not any(a in GENERIC and b in ("of", "for") for a, b in pairs)


# An error code or model number ("E21", "F05", "WM814"): the most specific thing a message
# names, so it is the subject even when a longer run sits beside it ("My washing machine is
# showing F05").
# Letters then digits, as codes are written ("E21", "WM-814", "B12"); not a number with a unit
# ("2-year", "24h") nor a range ("40-60").
CODE = re.compile(r"[A-Za-z]{1,4}-?\d{1,5}[A-Za-z]?")


# The word after "I", "we", "you" is a verb ("How much can I accept as a gift?"), not what the
# message is about.
_AFTER_PRONOUN = re.compile(r"\b(I|we|you)\s+(?!\d)\w+", re.IGNORECASE)


def _code(text: str) -> str:
    return next((w for w in words(text) if CODE.fullmatch(w) and is_topical(w)), "")


def subject(text: str) -> str:
    """What a message is about: what follows "about" / "regarding" when that names something
    ("I'd like to learn about X"; kept verbatim when it holds no question vocabulary, since
    names have stopwords and one-letter parts: "Down syndrome", "ichthyosis with confetti"),
    else its ``topic``."""
    about = _ABOUT_TOPIC.search(text)
    if about:
        rest = _TRAILING_POLITE.sub("", _LEADING_DET.sub("", about.group("rest").strip()))
        if _is_name(rest):
            return rest  # verbatim: "Down syndrome", "Factor V deficiency"
        found = topic(rest)
        if found:
            return found
    return _code(text) or noun_topic(text)


def noun_topic(text: str, *, common: bool = False) -> str:
    """``topic`` without the verb after "I" and without "my daughter" (who, not what);
    ``common``: only a run with no capitalised word (a common noun for a common noun)."""
    cleaned = referents.RELATION.sub(" , ", _AFTER_PRONOUN.sub(r"\1 ,", text))
    return _longest_run(cleaned, source_loses_ties=True, common=common)
