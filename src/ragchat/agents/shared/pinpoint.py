"""Citations as precise as the document allows: a spreadsheet citation names the row(s) the
reply quoted, not the passage's whole table ("Fees 2026, row 6", not "rows 2–8"); a transcript
citation the cues of the sentence quoted, not the whole meeting.

One place, applied by the engine to every turn's citations (``ChatEngine``), so ``/chat``,
``/query``, ``/v1``, the page, ``ragchat chat`` and ``Chatbot`` cite alike, whichever answerer
wrote the reply (the extractive one or a model). What was quoted is the citation's ``quote``
when the answerer set one, else the reply's sentences that carry its marker ``[n]``; it is
placed in the cited passage by its words: a passage line (a table row) or a caption (a cue) is
quoted when it holds most of a quoted sentence's words and clearly more than the others do. A
citation whose quote cannot be placed, or matches most of the passage, keeps its range."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragchat.ingest.text_utils import format_ts
from ragchat.types import Citation, Hit, TimedSpan, chunk_cues

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+")
_MIN_SHARE = 0.5  # of a quoted sentence's words a unit must hold
_CLEAR = 0.15  # and this much more than the next best unit does (or be the only one)
_MIN_WORDS = 3  # "Yes." inside a caption, or a caption "Okay." inside a sentence, says nothing


def pinpoint(reply: str, citations: Sequence[Citation]) -> list[Citation]:
    """``citations`` narrowed to what ``reply`` quoted from each (see the module docstring)."""
    cited = _cited_sentences(reply)
    return [_narrow(c, _quoted(c, cited)) for c in citations]


def _cited_sentences(reply: str) -> dict[int, list[str]]:
    """Marker number → the reply's sentences that carry it, without their markers."""
    out: dict[int, list[str]] = {}
    for sentence in _SENTENCE.split(reply or ""):
        numbers = {int(n) for m in _MARKER.finditer(sentence) for n in m.group(1).split(",")}
        text = _MARKER.sub("", sentence).strip()
        if not text:
            continue
        for n in numbers:
            out.setdefault(n, []).append(text)
    return out


def _quoted(citation: Citation, cited: dict[int, list[str]]) -> list[str]:
    if citation.quote.strip():
        return [s for s in _SENTENCE.split(citation.quote) if s.strip()]
    return cited.get(citation.index, [])


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _pick(units: Sequence[str], sentences: Sequence[str]) -> list[int]:
    """Indexes of the units (rows, captions) the sentences quote, in order; [] when none is
    clearly quoted."""
    unit_words = [set(_words(u)) for u in units]
    flat = [" ".join(_words(u)) for u in units]
    chosen: set[int] = set()
    for sentence in sentences:
        words = _words(sentence)
        if not words:
            continue
        said = " ".join(words)
        # Verbatim first: the unit inside the sentence, or the sentence inside the unit.
        exact = [
            i
            for i, f in enumerate(flat)
            if (len(unit_words[i]) >= _MIN_WORDS and f in said)
            or (len(words) >= _MIN_WORDS and said in f)
        ]
        if exact:
            chosen.update(exact)
            continue
        shares = [sum(w in u for w in words) / len(words) for u in unit_words]
        ranked = sorted(range(len(units)), key=lambda i: -shares[i])
        best = ranked[0] if ranked else None
        if best is None or shares[best] < _MIN_SHARE:
            continue
        runner_up = shares[ranked[1]] if len(ranked) > 1 else 0.0
        if shares[best] - runner_up >= _CLEAR:
            chosen.add(best)
    if len(units) > 2 and len(chosen) > len(units) // 2:
        return []  # most of the passage: its own range says as much
    return sorted(chosen)


def _narrow(citation: Citation, sentences: list[str]) -> Citation:
    hit = citation.hit
    if hit is None or not sentences:
        return citation
    if citation.rows is not None:
        return _narrow_rows(citation, hit, sentences)
    if citation.start_ts is not None:
        return _narrow_cues(citation, hit, sentences)
    return citation


def _row_lines(hit: Hit) -> tuple[list[str], list[int]] | None:
    """The passage's table lines and the spreadsheet row number of each; None when they
    cannot be paired (the passage is not one line per row)."""
    rows = hit.chunk.metadata.get("rows") or []
    lines = [line for line in (hit.chunk.text or "").split("\n") if line.strip()]
    if not lines or not rows:
        return None
    numbers = [int(r) for r in rows]
    if len(numbers) == len(lines):
        return lines, numbers
    first, last = numbers[0], numbers[-1]
    if last - first + 1 == len(lines):  # consecutive rows: the line's place is its row
        return lines, list(range(first, last + 1))
    return None


def _narrow_rows(citation: Citation, hit: Hit, sentences: list[str]) -> Citation:
    paired = _row_lines(hit)
    if paired is None:
        return citation
    lines, numbers = paired
    picked = _pick(lines, sentences)
    if not picked or len(picked) == len(lines):
        return citation
    rows = [numbers[i] for i in picked]
    if len(rows) == 1:
        span = f"row {rows[0]}"
    elif rows == list(range(rows[0], rows[-1] + 1)):
        span = f"rows {rows[0]}–{rows[-1]}"
    else:
        span = "rows " + ", ".join(map(str, rows[:-1])) + f" and {rows[-1]}"
    sheet = citation.sheet or ""
    return replace(
        citation,
        rows=(rows[0], rows[-1]),
        location=f"{sheet}, {span}" if sheet else span,
        quote=citation.quote or "\n".join(lines[i] for i in picked),
    )


def _narrow_cues(citation: Citation, hit: Hit, sentences: list[str]) -> Citation:
    text = hit.context if hit.context is not None and hit.cues else hit.chunk.text
    cues: Sequence[TimedSpan] = hit.cues if hit.context is not None and hit.cues else ()
    if not cues:
        cues = chunk_cues(hit.chunk)
    if not cues or not text:
        return citation
    captions = [text[c.start_char : c.end_char] for c in cues]
    picked = _pick(captions, sentences)
    if not picked or len(picked) == len(cues):
        return citation
    spans = [cues[i] for i in picked]
    start, end = min(c.start for c in spans), max(c.end for c in spans)
    speakers = tuple(dict.fromkeys(c.speaker for c in spans if c.speaker))
    start_ts, end_ts = format_ts(start), format_ts(end)
    who = f" ({', '.join(speakers)})" if speakers else ""
    # Captions quoted far apart are named each, not as one range over what lies between.
    runs: list[list[int]] = []
    for i in picked:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    ranges = ", ".join(f"{format_ts(cues[r[0]].start)}–{format_ts(cues[r[-1]].end)}" for r in runs)
    return replace(
        citation,
        start_ts=start_ts,
        end_ts=end_ts,
        speakers=speakers,
        location=f"{ranges}{who}",
        quote=citation.quote or " ".join(captions[i].strip() for i in picked),
    )
