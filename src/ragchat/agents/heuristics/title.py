"""Conversation titles without an LLM: the key words of the first question, in Title Case.

"What is the maximum daily dose of acetaminophen for an adult?" → "Maximum Daily Dose of
Acetaminophen". Question openers ("what is the", "can you tell me about") and filler words are
dropped, small connectors ("of", "for", "and") are kept between content words, acronyms and
mixed-case words ("NSAID", "iPhone") keep their case.
"""

from __future__ import annotations

import re

from ragchat.agents.heuristics.reformulate import SOCIAL
from ragchat.reader.text import STOPWORDS, words, wordset

FALLBACK = "New conversation"
MAX_CHARS = 60
_CONNECTORS = frozenset({"of", "for", "and", "with", "in", "to", "vs", "on", "after", "during"})
_OPENER = re.compile(
    r"^\s*(?:(?:hi|hello|hey|please|so|ok|okay|um|well)[,!.\s]+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|explain|help|show|give)\s+"
    r"(?:me\s+)?(?:about|with|on)?\s*|tell\s+me\s+(?:more\s+)?about\s+|explain\s+|"
    r"i\s+(?:want|would like|need|wanted)\s+to\s+(?:know|learn|understand|ask)\s+"
    r"(?:about|if|whether|how|what|why|when)?\s*|i\s+have\s+a\s+question\s+about\s+|"
    r"i'm\s+wondering\s+(?:about|if|whether)?\s*|quick\s+question[:,]?\s*)",
    re.IGNORECASE,
)
# Words that carry no topic in a title (question words, pronouns, light verbs, fillers).
_FILLER = wordset(
    """what what's whats how why when where who which whom is are was were do does did can
    could should would will shall may might must be been being have has had am i i'm i've me my
    mine you your we our us they them their it its this that these those there here please
    tell know explain want need wondering question thanks thank hi hello hey okay ok just
    really actually anyone someone something anything get got give giving take taking feel
    feeling felt lately anymore single"""
)
_ARTICLES = frozenset({"a", "an", "the", "some", "any"})


def _title_word(word: str, first: bool) -> str:
    low = word.lower()
    if not first and low in _CONNECTORS:
        return low
    if any(c.isupper() for c in word[1:]) or (word.isupper() and len(word) > 1):
        return word  # NSAID, iPhone, COVID-19
    return "-".join(p[:1].upper() + p[1:] for p in word.split("-"))


def make_title(first_user: str, first_reply: str = "", max_words: int = 6) -> str:
    """A short title (≤ ``max_words`` words, ≤ 60 characters, no trailing punctuation) from the
    first user message; the first reply's first sentence is used only when the message has no
    content words (e.g. a greeting). ``"New conversation"`` when neither has any."""
    for text in (first_user, first_reply.split("\n")[0][:200]):
        title = _from_text(text, max_words)
        if title:
            return title
    return FALLBACK


def _from_text(text: str, max_words: int) -> str:
    text = _OPENER.sub("", text.strip())
    picked: list[str] = []
    content = 0
    for w in words(text):
        low = w.lower().replace("’", "'")
        if low in _CONNECTORS:
            if picked and picked[-1].lower() not in _CONNECTORS:
                picked.append(w)
            continue
        if low in _ARTICLES:
            continue
        if low in _FILLER or low in STOPWORDS or low in SOCIAL:
            if picked and picked[-1].lower() in _CONNECTORS:
                picked.pop()
            continue
        picked.append(w)
        content += 1
        if len(picked) >= max_words:
            break
    picked = picked[:max_words]
    while picked and picked[-1].lower() in _CONNECTORS:
        picked.pop()
    if not content:
        return ""
    title = " ".join(_title_word(w, i == 0) for i, w in enumerate(picked))
    if len(title) > MAX_CHARS:
        title = title[:MAX_CHARS].rsplit(" ", 1)[0]
    return title.rstrip(" .,;:!?-")
