"""Small text helpers shared by the offline agents: tokens, stems, content words, Markdown
clean-up, sentence splitting and deterministic variant choice."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragchat.ingest.text_utils import SENTENCE_END
from ragchat.retrieve.terms import (  # noqa: F401  (re-exported for the agents)
    GENERIC_WORDS,
    STOPWORDS,
    WEAK_STEMS,
    WORD,
    content_stems,
    content_words,
    stem,
    words,
    wordset,
)

# --- Markdown / sentence handling -------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_NUMBERED = re.compile(r"^\s*\d{1,3}[.)]\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_SINGLE_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_TERMINAL = re.compile(r"[.!?:;)\"'”’\]]$")


def strip_inline(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    text = _SINGLE_STAR.sub(r"\1", text)
    return " ".join(text.split())


def is_heading(line: str) -> bool:
    return bool(_HEADING.match(line))


@dataclass(frozen=True)
class Piece:
    """A sentence of a chunk and the heading it sits under (``""`` when none)."""

    text: str
    heading: str = ""

    @property
    def is_question(self) -> bool:
        return self.text.rstrip().endswith("?")


def _logical_lines(text: str) -> list[str]:
    """Lines with hard wraps (Markdown source wraps, PDF text) re-joined: a line without
    closing punctuation continues on the next one when that starts in lower case, or when it
    is too long to be a heading (more than 12 words) or the next starts with a number, and the
    next is no bullet or heading —
    so "a fine of up to" / "300 dollars." stays one sentence. A wrapped bullet item continues
    on an indented line."""
    out: list[str] = []
    blank = True
    for raw in text.replace("\r", "").split("\n"):
        line = raw.rstrip()
        if not line.strip():
            blank = True
            continue
        after_blank, blank = blank, False
        prev = out[-1] if out else ""
        continues = line.lstrip()[:1].islower() or (
            not after_blank
            and (
                len(prev.split()) > 12
                or line.lstrip()[:1] in "0123456789(%$€£"
                or (_BULLET.match(prev) is not None and line[:1].isspace())
            )
        )
        if (
            out
            and continues
            and not _BULLET.match(line)
            and not is_heading(line)
            and not is_heading(prev)
            and not _TERMINAL.search(prev)
        ):
            out[-1] = f"{out[-1]} {line.strip()}"
        else:
            out.append(line)
    return out


def _plain_heading(line: str, nxt: str | None, prev: str | None) -> bool:
    """A short line without closing punctuation that is followed by more text (PDF headings,
    numbered ones included)."""
    if nxt is None or _TERMINAL.search(line.strip()) or len(line.split()) > 12:
        return False
    if not _BULLET.match(line):
        return True
    return (
        bool(_NUMBERED.match(line))
        and not _BULLET.match(nxt)
        and (prev is None or not _BULLET.match(prev))
    )


def segment(text: str, headings: frozenset[str] | None = None) -> list[Piece]:
    """Readable sentences of a chunk: headings become the ``heading`` of what follows, bullets
    and emphasis are stripped, a line ending in ":" followed by bullets becomes one sentence
    ("used for: a, b, c.") or, for long lower-case items, one sentence per item ("The risk is
    higher if you take ..."), and a fragment cut off at either end of the chunk is dropped.

    ``headings`` marks text whose lines are paragraphs (a slide's bullets, Word or web
    paragraphs, table rows) rather than hard-wrapped lines (PDF, OCR, plain text): lines are
    then never joined, and only a Markdown heading or one of ``headings`` (the loader's own,
    from the section's metadata) is a heading, so a short bullet without a full stop ("Null
    hypothesis H0: the 'no effect' claim") stays a sentence of its own."""
    if headings is not None:
        return _paragraph_pieces(text, headings)
    lines = _logical_lines(text)
    out: list[Piece] = []
    heading = ""
    section = ""  # the heading before a run of plain "headings"
    pending = ""  # a plain heading nothing has followed yet
    run = 0  # plain headings with numbers in a row before ``pending``
    i = 0
    while i < len(lines):
        raw = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        prev = lines[i - 1] if i > 0 else None
        i += 1
        if set(raw.strip()) <= set("-=*_|# "):
            continue
        if is_heading(raw):
            heading = section = strip_inline(_HEADING.sub("", raw))
            pending = ""
            continue
        if _plain_heading(raw, nxt, prev):
            if pending and _DIGIT.search(pending) and len(pending.split()) >= 3:
                # Two "headings" in a row: the first heads nothing. In PDF text that is a
                # table row ("Cotton 90 C 8 kg 3 h 30 min"), and it holds the answer.
                out.append(Piece(pending + ".", section))
            if not pending:
                section = heading
            run = run + 1 if pending and _DIGIT.search(pending) else 0
            heading = pending = strip_inline(raw)
            continue
        if run and _DIGIT.search(pending) and len(pending.split()) >= 3:
            out.append(Piece(pending + ".", section))  # the last row of such a run
            heading = section
        pending, run = "", 0
        bullet = bool(_BULLET.match(raw))
        pieces = sentence_pieces(strip_inline(_BULLET.sub("", raw)))
        listed = _introduced_list(pieces, lines, i, heading)
        if listed is not None:
            found, i = listed
            out.extend(found)
            continue
        for j, piece in enumerate(pieces):
            last = i == len(lines) and j == len(pieces) - 1
            if _fragment_start(piece):
                continue  # the chunk starts mid-sentence (or mid-list)
            if last and not bullet and not _TERMINAL.search(piece) and out:
                continue  # the chunk was cut mid-sentence
            if bullet and not _TERMINAL.search(piece):
                piece += "."
            out.append(Piece(piece, heading))
    return out


def _introduced_list(
    pieces: list[str], lines: Sequence[str], i: int, heading: str
) -> tuple[list[Piece], int] | None:
    """A line ending "…include:" followed by bullets (``lines[i:]``): its sentences, then one
    sentence per item led by the introduction, and the index after the bullets; ``None`` when
    the line introduces no list."""
    if not (pieces and pieces[-1].endswith(":") and i < len(lines) and _BULLET.match(lines[i])):
        return None
    pieces = list(pieces)
    intro = pieces.pop()
    if pieces and len(intro.split()) <= 5:  # "Common ones include:" needs its lead-in
        intro = f"{pieces.pop()} {intro}"
    items: list[str] = []
    while i < len(lines) and _BULLET.match(lines[i]):
        items.append(strip_inline(_BULLET.sub("", lines[i])).rstrip(".;,"))
        i += 1
    out = [Piece(p, heading) for p in pieces]
    out += [Piece(p, heading) for p in _list_sentences(intro, items)]
    return out, i


def _paragraph_pieces(text: str, headings: frozenset[str]) -> list[Piece]:
    """``segment`` for text whose lines are paragraphs (see there)."""
    known = {" ".join(h.split()).casefold() for h in headings if h.strip()}
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n") if line.strip()]
    out: list[Piece] = []
    heading = ""
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if set(raw.strip()) <= set("-=*_|# "):
            continue
        plain = strip_inline(_HEADING.sub("", raw))
        if is_heading(raw) or " ".join(plain.split()).casefold() in known:
            heading = plain
            continue
        pieces = sentence_pieces(strip_inline(_BULLET.sub("", raw)))
        listed = _introduced_list(pieces, lines, i, heading)
        if listed is not None:
            found, i = listed
            out.extend(found)
            continue
        for piece in pieces:
            if not _TERMINAL.search(piece):
                piece += "."
            out.append(Piece(piece, heading))
    return out


_LIST_VERBS = wordset("include includes including contain contains mean means")


def _list_sentences(intro: str, items: list[str]) -> list[str]:
    items = [it for it in items if it]
    if not items or sum(it.endswith("?") for it in items) * 2 > len(items):
        return []  # a list of example questions answers nothing
    if all(len(it.split()) <= 8 for it in items):
        return [f"{intro} {', '.join(items)}."]
    lead = intro.rstrip(":").rstrip()
    # "The risk is higher if you: take …" reads on as one sentence; "… fights the infection:
    # pain relievers …" needs its colon kept.
    last = lead.split()[-1].lower() if lead.split() else ""
    joint = " " if last in STOPWORDS or last in _LIST_VERBS else ": "
    out: list[str] = []
    for it in items:
        if it[:1].islower():
            out.append(f"{lead}{joint}{it}.")
        else:
            out.extend(sentence_pieces(it if _TERMINAL.search(it) else it + "."))
    return out


def _fragment_start(piece: str) -> bool:
    head = piece.split(maxsplit=1)[0] if piece.split() else ""
    return head[:1].islower() and head.islower()


# A transcript turn's "Name: " prefix.
SPEAKER = re.compile(r"^[A-Z][\w.'’ -]{0,40}:\s+(?=[A-Z\"“])")
# "City: London; Maximum per night: 180." — a table row quoted as "Column: value; Column:
# value"; CELL_LABEL is what a column's name looks like there, NEXT_CELL the start of a cell
# after the first (a speaker's "Name: ..." has none).
CELL_LABEL = r"[A-Z][\w .'’()/-]{0,40}"
NEXT_CELL = re.compile(rf";\s+{CELL_LABEL}:\s")
_DIGIT = re.compile(r"\d")


def strip_speaker(sentence: str) -> str:
    """ "Dr. Samuel Okafor: It varies." → "It varies." (transcript turn prefixes); a table
    row keeps its first column name."""
    return sentence if NEXT_CELL.search(sentence) else SPEAKER.sub("", sentence)


def split_sentences(text: str, *, speakers: bool = True) -> list[str]:
    """Sentence texts of ``segment``; ``speakers=False`` drops "Name: " turn prefixes."""
    out = [p.text for p in segment(text)]
    return out if speakers else [strip_speaker(s) for s in out]


_ABBREVIATIONS = wordset("dr mr mrs ms prof st vs etc e.g i.e approx fig no jr sr")


def sentence_pieces(line: str) -> list[str]:
    """Splits one line at sentence ends, not after "Dr.", "e.g." or initials."""
    out: list[str] = []
    start = 0
    for m in SENTENCE_END.finditer(line):
        before = line[start : m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
            continue
        out.append(line[start : m.end()].strip())
        start = m.end()
    rest = line[start:].strip()
    if rest:
        out.append(rest)
    return [p for p in out if p]


def choose(options: Sequence[str], *keys: str) -> str:
    """A deterministic pick (stable across processes, unlike ``hash``)."""
    digest = hashlib.blake2b("\x1f".join(keys).encode(), digest_size=4).digest()
    return options[int.from_bytes(digest, "little") % len(options)]


def seed(*keys: str) -> int:
    digest = hashlib.blake2b("\x1f".join(keys).encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


# Openers that lean on a sentence the answer does not quote ("So a toddler might …").
CONNECTIVE = re.compile(
    r"^(?:so|and|but|also|well|plus|now|then|yes|yeah|right|okay|ok|anyway|however|still|otherwise"
    r"|that said|in that case|because of that|for that reason|on the other hand)\b,?\s+"
    r"(?=\S)",
    re.IGNORECASE,
)


def without_opener(sentence: str, *, lead: bool) -> str:
    """A quoted sentence as the answer shows it: without a dangling opener ("So a toddler
    might …" → "A toddler might …"). The speaker label is already gone (``strip_speaker``):
    the citation names who said it. Contrastive openers ("However, …") stay after the lead."""
    m = CONNECTIVE.match(sentence)
    if m is None:
        return sentence
    word = m.group(0).split()[0].lower().rstrip(",")
    if not lead and word in {"however", "still", "but", "on", "that", "in", "because", "for"}:
        return sentence
    rest = sentence[m.end() :]
    return rest[:1].upper() + rest[1:] if rest else sentence
