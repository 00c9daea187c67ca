"""Parent/child chunking: small children are what gets searched, parents what the answerer reads.

Children are character windows that end at sentence boundaries when they can and never cross a
section (page, heading section). Transcript turns are first grouped into blocks of at most
``parent_size`` characters, and their children are also limited in time. Everything is a pure
function of the document and the settings, so ids are stable across runs.

Output order: document order, each parent immediately followed by its children.

A transcript chunk's metadata also lists its ``cues``: ``[start_char, end_char, start_s, end_s,
speaker]`` per caption, offsets into the chunk's text, so a quoted sentence can be given the
time range of the captions it comes from.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from typing import Any

from ragchat.ingest.text_utils import (
    SENTENCE_BREAK,
    SENTENCE_END,
    format_ts,
    normalize_with_map,
    normalize_ws,
    remap_offset,
)
from ragchat.settings import ChunkingSettings
from ragchat.types import Chunk, LoadedDocument, Section, TimedSpan

_WORD_START = re.compile(r"\s(?=\S)")


@dataclass(frozen=True)
class _Segment:
    """Text windowed as one unit: a section, or a block of consecutive transcript turns."""

    text: str
    sections: tuple[Section, ...]
    starts: tuple[int, ...]  # offset in ``text`` where each section begins
    spans: tuple[TimedSpan, ...] = ()

    @cached_property
    def span_ends(self) -> list[int]:
        return [s.end_char for s in self.spans]

    @cached_property
    def span_starts(self) -> list[int] | None:
        """Start offsets when in order (cues are), so a chunk finds its cues by bisection:
        scanning every later cue for each chunk took 45 s for a 100,000-cue transcript."""
        starts = [s.start_char for s in self.spans]
        return starts if all(a <= b for a, b in pairwise(starts)) else None

    def section_at(self, offset: int) -> Section:
        return self.sections[max(bisect_right(self.starts, offset) - 1, 0)]


def _normalized_turn(section: Section) -> tuple[str, tuple[TimedSpan, ...]]:
    """Normalises a turn's text and moves its spans along, so times stay on the right words."""
    text = normalize_ws(section.text)
    if text == section.text:
        return text, section.spans
    text, index_map = normalize_with_map(section.text)
    spans = []
    for span in section.spans:
        start = remap_offset(index_map, span.start_char)
        end = remap_offset(index_map, span.end_char)
        if end > start:
            spans.append(TimedSpan(start, end, span.start, span.end, span.speaker))
    return text, tuple(spans)


class Chunker:
    """Turns a loaded document into parents and children; see the module docstring for order."""

    def __init__(self, settings: ChunkingSettings) -> None:
        self.settings = settings
        self.size = settings.child_size
        # An overlap of half a window or more would stall progress; clamp it.
        self.overlap = min(settings.child_overlap, settings.child_size // 2)

    def chunk(self, doc: LoadedDocument) -> list[Chunk]:
        base: dict[str, Any] = {
            **doc.metadata,
            "source": doc.source,
            "kind": doc.kind,
            "doc_title": doc.title,
        }
        out: list[Chunk] = []
        n_children = 0
        n_parents = 0
        # Corpus records (BEIR-style JSONL) are passages already: one chunk per record keeps the
        # retrieval unit the corpus was judged on, unless a record is very long.
        size = self.settings.record_size if doc.kind == "jsonl" else self.size
        for seg in self._segments(doc):
            table = seg.sections[0].table and not seg.spans
            windows = self._row_windows(seg, size) if table else self._windows(seg, size)
            for group in self._group(windows, max(size, self.settings.parent_size)):
                pa, pb = group[0][0], group[-1][1]
                first = seg.section_at(pa)
                parent_id = f"{doc.doc_id}_{first.locator}_P{n_parents}"
                out.append(
                    Chunk(
                        chunk_id=parent_id,
                        doc_id=doc.doc_id,
                        text=seg.text[pa:pb].strip(),
                        position=n_parents,
                        parent_id=None,
                        is_parent=True,
                        metadata=self._metadata(base, seg, pa, pb),
                    )
                )
                n_parents += 1
                for a, b in group:
                    section = seg.section_at(a)
                    out.append(
                        Chunk(
                            chunk_id=f"{doc.doc_id}_{section.locator}_c{n_children}",
                            doc_id=doc.doc_id,
                            text=seg.text[a:b].strip(),
                            position=n_children,
                            parent_id=parent_id,
                            metadata=self._metadata(base, seg, a, b),
                        )
                    )
                    n_children += 1
        return out

    # -- segments ---------------------------------------------------------------------------

    def _segments(self, doc: LoadedDocument) -> Iterator[_Segment]:
        pending: list[tuple[Section, str, tuple[TimedSpan, ...]]] = []
        for section in doc.sections:
            if not section.spans:
                yield from self._flush(pending)
                pending = []
                text = normalize_ws(section.text)
                if text:
                    yield _Segment(text, (section,), (0,))
                continue
            text, spans = _normalized_turn(section)
            if not text:
                continue
            if pending and self._joined_len(pending) + 1 + len(text) > self.settings.parent_size:
                yield from self._flush(pending)
                pending = []
            pending.append((section, text, spans))
        yield from self._flush(pending)

    @staticmethod
    def _joined_len(pending: list[tuple[Section, str, tuple[TimedSpan, ...]]]) -> int:
        return sum(len(text) for _, text, _ in pending) + len(pending) - 1

    @staticmethod
    def _flush(pending: list[tuple[Section, str, tuple[TimedSpan, ...]]]) -> Iterator[_Segment]:
        """Joins a block of turns with newlines, shifting each turn's spans to block offsets."""
        if not pending:
            return
        parts: list[str] = []
        starts: list[int] = []
        spans: list[TimedSpan] = []
        offset = 0
        for _, text, turn_spans in pending:
            starts.append(offset)
            parts.append(text)
            spans.extend(
                TimedSpan(s.start_char + offset, s.end_char + offset, s.start, s.end, s.speaker)
                for s in turn_spans
            )
            offset += len(text) + 1
        yield _Segment(
            "\n".join(parts), tuple(s for s, _, _ in pending), tuple(starts), tuple(spans)
        )

    # -- windows ----------------------------------------------------------------------------

    def _windows(self, seg: _Segment, size: int) -> list[tuple[int, int]]:
        text, n = seg.text, len(seg.text)
        windows: list[tuple[int, int]] = []
        start, prev_end = 0, 0
        while start < n:
            limit = min(start + size, n)
            time_limit = self._time_limit(seg, start)
            if time_limit is not None and prev_end < time_limit < limit:
                end, timed = time_limit, True
            elif limit == n:
                end, timed = n, False
            else:
                end, timed = _find_break(text, start, limit, prev_end), False
            windows.append((start, end))
            if end >= n:
                break
            start = end if timed else self._next_start(text, start, end)
            while start < n and text[start].isspace():
                start += 1
            prev_end = end
        return windows

    def _row_windows(self, seg: _Segment, size: int) -> list[tuple[int, int]]:
        """A table's rows packed whole into windows of at most ``size``, without overlap.

        Every row names its columns (``ingest.tables``), so a window needs nothing repeated
        from another. A row longer than ``size`` is a window of its own, and only a row longer
        than a parent is cut like prose.
        """
        text = seg.text
        windows: list[tuple[int, int]] = []
        open_ = False  # may the last window take the next row?
        for a, b in _line_spans(text):
            if b - a > max(size, self.settings.parent_size):
                part = _Segment(text[a:b], seg.sections, (0,))
                windows.extend((a + x, a + y) for x, y in self._windows(part, size))
                open_ = False
            elif open_ and b - windows[-1][0] <= size:
                windows[-1] = (windows[-1][0], b)
            else:
                windows.append((a, b))
                open_ = True
        return windows

    def _time_limit(self, seg: _Segment, start: int) -> int | None:
        """End offset of the last caption within ``vtt_child_seconds`` of the window's start."""
        if not seg.spans:
            return None
        k = min(bisect_right(seg.span_ends, start), len(seg.spans) - 1)
        horizon = seg.spans[k].start + self.settings.vtt_child_seconds
        j = k
        while j + 1 < len(seg.spans) and seg.spans[j + 1].end <= horizon:
            j += 1
        return seg.spans[j].end_char if j + 1 < len(seg.spans) else None

    def _next_start(self, text: str, start: int, end: int) -> int:
        """Backs up by the overlap, to a sentence start if one is near, else to a word start."""
        if self.overlap == 0:
            return end
        lo = max(end - self.overlap, start + 1)
        for m in SENTENCE_BREAK.finditer(text, max(lo - 8, start), end):
            if lo <= m.end() < end:
                return m.end()
        word = _WORD_START.search(text, lo - 1, end)
        return word.end() if word else end

    @staticmethod
    def _group(windows: list[tuple[int, int]], parent_size: int) -> list[list[tuple[int, int]]]:
        """Consecutive children of one segment, while their covered text fits ``parent_size``."""
        groups: list[list[tuple[int, int]]] = []
        for window in windows:
            if groups and window[1] - groups[-1][0][0] <= parent_size:
                groups[-1].append(window)
            else:
                groups.append([window])
        return groups

    # -- metadata ---------------------------------------------------------------------------

    @staticmethod
    def _metadata(base: dict[str, Any], seg: _Segment, a: int, b: int) -> dict[str, Any]:
        section = seg.section_at(a)
        meta = {**base, **section.metadata}
        if section.table:
            meta["table"] = True
            rows = _rows_between(seg.text, section.row_numbers, a, b)
            if rows is not None:
                meta["rows"] = rows
        if seg.spans:
            first = bisect_right(seg.span_ends, a)
            starts = seg.span_starts
            if starts is not None:
                hit = list(seg.spans[first : bisect_left(starts, b, first)])
            else:
                hit = [s for s in seg.spans[first:] if s.start_char < b]
            if hit:
                start = min(s.start for s in hit)
                end = max(s.end for s in hit)
                # The chunk's text is seg.text[a:b].strip(): cue offsets are relative to it.
                lead = len(seg.text[a:b]) - len(seg.text[a:b].lstrip())
                meta.update(
                    start=start,
                    end=end,
                    start_ts=format_ts(start),
                    end_ts=format_ts(end),
                    speakers=list(dict.fromkeys(s.speaker for s in hit if s.speaker)),
                    cues=[
                        [
                            max(s.start_char - a - lead, 0),
                            s.end_char - a - lead,
                            s.start,
                            s.end,
                            s.speaker or "",
                        ]
                        for s in hit
                    ],
                )
        return meta


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    start = 0
    for line in text.split("\n"):
        if line.strip():
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _rows_between(text: str, numbers: tuple[int, ...], a: int, b: int) -> list[int] | None:
    """First and last row number of the table lines in ``text[a:b]`` (one number per line)."""
    if not numbers:
        return None
    first = text.count("\n", 0, a)
    last = first + text.count("\n", a, max(a, b - 1))
    if last >= len(numbers):  # the text no longer has one line per row: cite no rows
        return None
    return [numbers[first], numbers[last]]


def _find_break(text: str, start: int, limit: int, min_end: int) -> int:
    """Best end in ``(max(start, min_end), limit]``: sentence end, then newline, then space.

    Breaks in the second half of the window are tried first so children are not tiny; a hard
    cut at ``limit`` only happens inside a word longer than the window.
    """
    floor = max(start, min_end)
    for lo in (max(start + (limit - start) // 2, floor), floor):
        best = -1
        for m in SENTENCE_END.finditer(text, lo, min(limit + 1, len(text))):
            if lo < m.end() <= limit:
                best = m.end()
        if best > 0:
            return best
        for sep in ("\n", " "):
            pos = text.rfind(sep, lo + 1, limit + 1)
            if pos > floor:
                return pos
    return limit
