"""Where a quoted sentence was spoken: a transcript citation narrowed to the captions (cues)
its quoted sentences come from, so "Source 1" opens at the words the answer quotes rather than
at the start of a two-minute passage, and the source panel shows those cues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragchat.ingest.text_utils import format_ts
from ragchat.types import Citation, Hit, TimedSpan, chunk_cues

_PROBE_WORDS = 8


def _find(text: str, sentence: str) -> tuple[int, int] | None:
    """Char range of ``sentence`` in ``text`` (whitespace-insensitive on its first words)."""
    words = sentence.split()
    if not words:
        return None
    for n in (_PROBE_WORDS, 4):
        probe = " ".join(words[:n])
        at = " ".join(text.split("\n")).find(probe)  # newlines are single chars: same offsets
        if at >= 0:
            return at, min(at + len(sentence), len(text))
    return None


def quoted_cues(text: str, sentences: Sequence[str], cues: Sequence[TimedSpan]) -> list[TimedSpan]:
    """The cues overlapping the places of ``sentences`` in ``text`` (document order)."""
    found: dict[int, TimedSpan] = {}
    for sentence in sentences:
        place = _find(text, sentence)
        if place is None:
            continue
        a, b = place
        for i, cue in enumerate(cues):
            if cue.start_char < b and cue.end_char > a:
                found[i] = cue
    return [found[i] for i in sorted(found)]


def hit_cues(hit: Hit) -> tuple[TimedSpan, ...]:
    """The captions of the text a hit is quoted from: its parent context's when it has one,
    else its own chunk's; empty for an untimed document."""
    return hit.cues if hit.context is not None else chunk_cues(hit.chunk)


def narrow_citation(citation: Citation, hit: Hit, sentences: Sequence[str]) -> Citation:
    """``citation`` with the time range and speakers of the cues ``sentences`` (quoted from
    ``hit``) come from, and those sentences as its ``quote``; unchanged for untimed hits or
    when the sentences cannot be placed."""
    text = hit.context if hit.context is not None else hit.chunk.text
    cues = hit_cues(hit)
    spans = quoted_cues(text or "", sentences, cues) if cues else []
    if not spans:
        return citation
    start, end = min(c.start for c in spans), max(c.end for c in spans)
    speakers = tuple(dict.fromkeys(c.speaker for c in spans if c.speaker))
    start_ts, end_ts = format_ts(start), format_ts(end)
    who = f" ({', '.join(speakers)})" if speakers else ""
    return replace(
        citation,
        start_ts=start_ts,
        end_ts=end_ts,
        speakers=speakers,
        location=f"{start_ts}–{end_ts}{who}",
        quote=" ".join(sentences),
    )
