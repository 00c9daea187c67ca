"""What OCR leaves in text that a reader would not: pure functions, tested on their own.

- a full stop read from a speck of dust cuts a sentence ("we are. therefore writing"): a stop
  followed by a word in lower case is dropped unless the word before is an abbreviation; an
  opening quote read from a speck ("five ‘working days") is dropped when nothing closes it;
- a word hyphenated at the end of a line is joined ("ten-\\nancy" → "tenancy") when the joined
  word is a word and the hyphenated one is not (``wordfreq``), so "well-\\nknown" stays;
- a line that heads or foots most pages (the sender's address, "Page 3 of 7") is said once,
  on the first page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

_STRAY_STOP = re.compile(r"(?<=[A-Za-z])\.(?=[ \n]+[a-z])")
_HYPHEN_END = re.compile(r"([A-Za-z]{2,})-$")
_NEXT_WORD = re.compile(r"([a-z]{2,})([^\s]*)")
# Words after which a full stop does not end a sentence (lower case, without the stop).
_ABBREVIATION_WORDS = (
    "e.g i.e etc vs approx incl excl no nos dept est fig figs ref refs tel ca cf al ed eds "
    "mr mrs ms dr st rd ave jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu "
    "fri sat sun min max mg ml kg oz lb ft in p pp vol"
)
_ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_DIGITS = re.compile(r"\d+")
_EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be a running head


def drop_stray_stops(text: str) -> str:
    def keep(match: re.Match[str]) -> bool:
        start = match.start()
        word = re.search(r"[\w.]+$", text[max(0, start - 12) : start])
        token = word.group(0).lower() if word else ""
        return token in _ABBREVIATIONS or len(token) == 1 or "." in token

    out = []
    last = 0
    for match in _STRAY_STOP.finditer(text):
        if keep(match):
            continue
        out.append(text[last : match.start()])
        last = match.end()
    out.append(text[last:])
    return "".join(out)


_OPEN_QUOTE = re.compile(r"(?<=\s)[‘`'](?=[a-z])")
_CLOSE_QUOTE = re.compile(r"[a-z.,!?][’']")


def drop_stray_quotes(text: str) -> str:
    out = []
    last = 0
    for match in _OPEN_QUOTE.finditer(text):
        if _CLOSE_QUOTE.search(text, match.end(), match.end() + 80):
            continue
        out.append(text[last : match.start()])
        last = match.end()
    out.append(text[last:])
    return "".join(out)


@cache
def _frequency(word: str) -> float:
    from wordfreq import word_frequency

    return float(word_frequency(word, "en"))


def join_hyphens(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _HYPHEN_END.search(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        tail = _NEXT_WORD.match(nxt)
        if head and tail:
            joined = (head.group(1) + tail.group(1)).lower()
            hyphenated = f"{head.group(1)}-{tail.group(1)}".lower()
            glue = "" if 0 < _frequency(hyphenated) <= _frequency(joined) else "-"
            if _frequency(hyphenated) == 0 and _frequency(joined) > 0:
                glue = ""
            line = line[:-1] + glue + tail.group(1) + tail.group(2)
            rest = nxt[tail.end() :].strip()
            lines[i + 1] = rest
            out.append(line)
            i += 1 if rest else 2
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _key(line: str) -> str:
    """A line as compared across pages: page numbers and case do not count."""
    return _DIGITS.sub("#", " ".join(line.lower().split()))


def drop_running_heads(pages: Sequence[str], min_pages: int = 3) -> list[str]:
    """Removes from every page but the first a line among its first or last ``_EDGE_LINES``
    that is also there on at least half the pages (and ``min_pages``): the same address or
    "Page N of M" on every page is noise to a search, once is enough."""
    if len(pages) < min_pages:
        return list(pages)
    seen: Counter[str] = Counter()
    for page in pages:
        lines = [ln for ln in page.split("\n") if ln.strip()]
        edge = lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]
        seen.update({_key(ln) for ln in edge})
    repeated = {k for k, n in seen.items() if n >= max(min_pages, len(pages) / 2) and k}
    if not repeated:
        return list(pages)
    out = [pages[0]]
    for page in pages[1:]:
        lines = page.split("\n")
        content = [i for i, ln in enumerate(lines) if ln.strip()]
        ends = set(content[:_EDGE_LINES] + content[-_EDGE_LINES:])
        kept = [ln for i, ln in enumerate(lines) if not (i in ends and _key(ln) in repeated)]
        out.append("\n".join(kept).strip("\n"))
    return out


def clean_ocr_text(text: str) -> str:
    return join_hyphens(drop_stray_quotes(drop_stray_stops(text)))
