"""Does the retrieved text cover the question? The words and measures behind the refusal checks
(``checks.py`` names them and keeps their order; the trained reader reads them as signals).

A question whose key terms the retrieved passages do not hold is not answered by them: "How
much can I spend on a hotel in Tokyo?" finds the hotel table, but no Tokyo. Hybrid search ranks
any passage holding a rare query word high, so a word absent from every hit is, in practice,
absent from the knowledge base: the checks are calibrated by each knowledge base's own
vocabulary, with no labels. Asides in parentheses are not key terms.

A missing word is only *far* when no word of the retrieved passages is near it in meaning
(word vectors from the knowledge base's own embedder, cosine below ``NEAR_WORD``): users name
instances of what documents say in general ("a glass of wine" for "alcohol", "fly" for
"flights", "champagne" for a gift), and those questions are answerable. Everyday words
(``EVERYDAY_ZIPF``: "left", "start", "far") never count as missing.

Refused, before composing:
- half the key terms far, or a fifth of them names of something (a capitalised word or a code
  such as "E55": a place, product or code the documents never mention);
- one far word that is specific (rare in everyday English, ``SPECIFIC_ZIPF``: "acne", "wifi",
  "treasurer"; not a verb form such as "handling") and more than ``FOCUS_SHARE`` of the key
  terms: a short question whose subject the documents never mention;
- a label with a number the documents number differently ("paper 2" where they only have
  "paper 1").

Refused, after composing: the quoted sentences hold under ``ADDRESSED_SHARE``
of the key terms (a yes/no question: at most ``YES_NO_SHARE``, as a verdict needs the drug AND
the condition), or the question asks for a measured value (a price, a weight, a loudness, an
area, a count) and no quoted sentence holds one ("how many teeth": a number that counts teeth),
or the lead is the table row of the entity
asked about but none of its columns (nor its heading) is what is asked ("salary" of a notice
periods row).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.embed.cache import embed_sentences
from ragchat.reader.text import (
    CELL_LABEL,
    STOPWORDS,
    WEAK_STEMS,
    content_stems,
    stem,
    words,
    wordset,
)
from ragchat.retrieve.sections import without_aspect_words
from ragchat.retrieve.terms import NUMBER_WORD_PATTERN
from ragchat.types import Hit

MISSING_SHARE = 0.5
NAMED_MISSING_SHARE = 0.2
FOCUS_SHARE = 0.2
ADDRESSED_SHARE = 0.3
YES_NO_SHARE = 0.5
NEAR_WORD = 0.6
GENERIC_ZIPF = 5.9  # "work", "still", "need", "take": too common to name what a question is about
EVERYDAY_ZIPF = 5.5  # "left", "start", "school": their absence from the passages proves little
SPECIFIC_ZIPF = 4.6  # "acne", "wifi", "treasurer"; not "train", "coffee", "conference"
VOCAB_HITS = 5
_WORD_OWNER = "\x00word"  # the embedder's sentence cache keeps word vectors under this owner

_VERB_FORM = re.compile(r"(?:ing|ed)$", re.IGNORECASE)
_YES_NO = re.compile(r"^\s*(?:is|are|can|could|does|do|should|will|may)\b", re.IGNORECASE)
_ASKING = frozenset(
    stem(w)
    for w in wordset(
        """mean means meaning happen happens say says said tell know find anything something
        someone thing do does done doing go going information info details"""
    )
)
# "What research (or clinical trials) is being done for …?": an aside names alternatives, not
# terms a reply must hold.
_ASIDE = re.compile(r"\([^()]*\)")
_VOCAB_WORD = re.compile(r"[A-Za-z][a-z]{2,}")
# "paper 2", "lecture 7", "room 12": a label and its number.
_LABEL_NUMBER = re.compile(r"\b([A-Za-z]{3,})\s+(\d{1,4})\b(?!\s*(?:%|[a-zA-Z]))")
_NOT_LABELS = wordset(
    """under over than about around least most more less after before every each per within
    first last next top aged age ages weighing weigh from into onto between up down only"""
)
_COUNT = (
    rf"\d+|\b(?:{NUMBER_WORD_PATTERN}|(?:thir|four|fif"
    r"|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty(?:-\w+)?|hundred"
    r"|thousand|dozen|no|none|single|both|half|once|twice|all|unlimited)\b"
)
# A question asking for a measured value, and what a sentence holding that value looks like.
_MEASURES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(ask, re.IGNORECASE), re.compile(value, re.IGNORECASE))
    for ask, value in (
        (
            r"\b(?:cost|costs|price|prices|priced|how expensive|fee|fees)\b",
            r"[£$€¥]|\b(?:pounds?|pence|dollars?|euros?|quid|cents?|free|charge[sd]?)\b|\d+p\b",
        ),
        (
            r"\b(?:weigh|weighs|how heavy|weight of)\b",
            r"\d\s*(?:kg|g|kilos?|kilograms?|grams?|lbs?|pounds|tonnes?|stone)\b",
        ),
        (r"\b(?:how loud|noise level|how noisy)\b", r"\d\s*(?:db|dba|decibels?)\b"),
        (
            r"\b(?:how big|how large|square (?:metres|meters|feet)|how tall|how wide|dimensions)\b",
            r"\d\s*(?:m|cm|mm|km|metres?|meters?|feet|ft|inches|in|m2|m²|sq|square|acres?)\b",
        ),
        (r"^\s*(?:and\s+)?how many\b|\b(?:maximum|minimum|dose|dosage|how much)\b", _COUNT),
    )
)


@lru_cache(maxsize=50_000)
def _zipf(word: str) -> float:
    """How common ``word`` is in everyday English (Zipf scale, 0–8); 0 when the frequency
    tables are not installed, so every word then counts as specific and none as generic."""
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # pragma: no cover - wordfreq is a core dependency
        return 0.0
    return float(zipf_frequency(word.lower(), "en"))


def named(word: str) -> bool:
    return word[:1].isupper() or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word))


def _stems(text: str) -> set[str]:
    return {
        s
        for s in content_stems(text)
        if s not in WEAK_STEMS and s not in _ASKING and "'" not in s and not s.isdigit()
    }


def _generic_stems(query: str) -> set[str]:
    """Stems of the question's everyday words ("left", "work", "start"): a reply need not
    repeat them."""
    return {stem(w) for w in words(query) if not named(w) and _zipf(w) >= GENERIC_ZIPF}


def key_terms(query: str) -> tuple[set[str], set[str]]:
    """(the stems a reply must account for: content words outside parentheses, not generic or
    asking words, contractions or bare numbers; those of them that name an aspect, "outlook",
    "dose", which documents often say otherwise, "prognosis", and which therefore always count
    as found)."""
    query = _ASIDE.sub(" ", query)
    key = _stems(query)
    return key, key - _stems(without_aspect_words(query))


def hit_text(hit: Hit) -> str:
    """A hit's words as the checks see them: title, heading path and the passage."""
    md = hit.chunk.metadata
    path = " ".join(str(h) for h in (md.get("heading_path") or ()))
    return f"{md.get('doc_title') or md.get('title') or ''} {path} {hit.context or hit.chunk.text}"


def hit_stems(hit: Hit) -> set[str]:
    return content_stems(hit_text(hit))


def missing_terms(query: str, hits: Sequence[Hit]) -> tuple[list[str], int]:
    """The question's key terms that appear in no hit (as words of the question), and how many
    key terms it has."""
    key, seen = key_terms(query)
    if not key:
        return [], 0
    for hit in hits:
        seen |= hit_stems(hit)
    by_stem = {stem(w): w for w in words(query)}
    return [by_stem.get(s, s) for s in sorted(key - seen)], len(key)


def passage_words(texts: Sequence[str]) -> list[str]:
    """The words ``near`` compares a question's words with, in a stable order."""
    return sorted({w.lower() for t in texts for w in _VOCAB_WORD.findall(t)} - STOPWORDS - {""})


def warm_words(words_: Sequence[str], embedder: Embedder, *, batch: int = 64) -> int:
    """Embeds ``words_`` into the embedder's cache ahead of the first question (the server's
    prewarm), so the refusal checks of a first turn embed nothing but the question's words."""
    for i in range(0, len(words_), batch):
        chunk = list(words_[i : i + batch])
        embed_sentences(embedder, [_WORD_OWNER] * len(chunk), chunk)
    return len(words_)


def near(terms: Sequence[str], texts: Sequence[str], embedder: Embedder) -> set[str]:
    """The ``terms`` that some word of ``texts`` is near in meaning (cosine ≥ ``NEAR_WORD``).
    Word vectors go through the embedder's sentence cache, so a knowledge base's words are
    embedded once per process (and prewarmed by the server: ``warm_words``)."""
    vocab = passage_words(texts)
    asked = [t.lower().replace("’", "'").split("'")[0] for t in terms]  # "kid's" → "kid"
    if not vocab or not asked:
        return set()
    vecs = embed_sentences(embedder, [_WORD_OWNER] * (len(vocab) + len(asked)), vocab + asked)
    best = np.max(vecs[len(vocab) :] @ vecs[: len(vocab)].T, axis=1)
    return {t for t, s in zip(terms, best, strict=True) if float(s) >= NEAR_WORD}


def _counted(query: str, missing: Sequence[str]) -> list[str]:
    """Missing words that may show the question is not covered: names and codes, and plain
    words that are not everyday words; never contractions ("When's") or the question's first
    word, which is capitalised without naming anything ("Define")."""
    first = words(query)[:1]
    return [
        w
        for w in missing
        if "'" not in w
        and "’" not in w
        and w not in first
        and (named(w) or _zipf(w) < EVERYDAY_ZIPF)
    ]


def _renumbered(query: str, hits: Sequence[Hit]) -> bool:
    """Whether the question names a label with a number ("paper 2") that the hits only give
    other numbers ("paper 1")."""
    text = " ".join(hit_text(h) for h in hits)
    for label, number in _LABEL_NUMBER.findall(query):
        if label.lower() in _NOT_LABELS or label.lower() in STOPWORDS:
            continue
        found = re.findall(rf"\b{re.escape(label)}\s+(\d{{1,4}})\b", text, re.IGNORECASE)
        if found and number not in found:
            return True
    return False


_ROW_CELL = re.compile(rf"(?:^|;\s+){CELL_LABEL}:\s")


def row_values(text: str) -> set[str] | None:
    """The stems of a table row's values ("City: London; Maximum per night: 180." → london,
    180), None when ``text`` is not a row."""
    if not _ROW_CELL.match(text) or len(_ROW_CELL.findall(text)) < 2:
        return None
    return content_stems(_ROW_CELL.sub(" ", text))


def _row_columns(text: str) -> str:
    return " ".join(m.strip(" ;:") for m in _ROW_CELL.findall(text))


def _other_column(query: str, lead: str, label: str, embedder: Embedder | None) -> bool:
    """Whether the lead is a table row that matches the question's entity ("Senior
    associate") while no column or heading names what is asked of it ("salary" of a row with
    notice periods only)."""
    values = row_values(lead)
    if values is None:
        return False
    key, _ = key_terms(query)
    asked = key - values - _generic_stems(query)
    if not asked or not key & values:
        return False
    where = f"{_row_columns(lead)} {label}"
    if asked & content_stems(where):
        return False
    by_stem = {stem(w): w for w in words(query)}
    terms = [by_stem.get(s, s) for s in sorted(asked)]
    return embedder is None or not near(terms, [where], embedder)


_HOW_MANY = re.compile(r"\bhow many ([a-z]{3,})(?:\s+([a-z]{3,}))?", re.IGNORECASE)
# The words a number counts (the next one or two): "34 ATP", "fourteen households", "27 days",
# "2 to 5 years", "two large plots".
_COUNTED_WORDS = re.compile(
    rf"(?:{_COUNT})(?:\s*(?:to|-|–|or)\s*\w+)?\s+([A-Za-z]+)(?:\s+([A-Za-z]{{3,}}))?",
    re.IGNORECASE,
)


def _uncounted(query: str, texts: Sequence[str], embedder: Embedder | None) -> bool:
    """Whether "how many <things>" is answered by no quoted count of the things (or of a word
    near them): a number with the counted word right after it ("34 ATP", "fourteen households
    on the list"). "The small intestine is about 6 metres long" or "for dental abscesses the
    usual dose is 3 g" do not say how many teeth."""
    m = _HOW_MANY.search(query)
    if m is None:
        return False
    things = [w for w in m.groups() if w and w.lower() not in STOPWORDS]  # "sick days"
    if not things or any(_zipf(w) >= EVERYDAY_ZIPF for w in things):
        return False  # "how many people / days": households and dates count them too
    counted = [w for t in texts for pair in _COUNTED_WORDS.findall(t) for w in pair if w]
    if {stem(w.lower()) for w in things} & {stem(w.lower()) for w in counted}:
        return False
    return not counted or embedder is None or not near(things, [" ".join(counted)], embedder)


def _too_little(query: str, key: set[str], said: set[str]) -> bool:
    share = len(key & said) / len(key)
    if _YES_NO.match(query):  # a verdict needs the whole question: the drug AND the condition
        return share <= YES_NO_SHARE
    return share < ADDRESSED_SHARE
