"""WebVTT loader: captions become speaker turns whose characters map back to timestamps.

A section is one merged turn; the chunker groups turns into windows, so the loader needs no
settings. Each caption stays a ``TimedSpan`` of its turn, so a chunk that cuts a turn in the
middle still knows when its own words were spoken.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError

from ragchat.errors import IngestError
from ragchat.ingest.text_utils import collapse_ws, decode_utf8, format_ts, read_bytes, sha256_hex
from ragchat.types import LoadedDocument, Section, TimedSpan

_VOICE = re.compile(r"<v(?:\.[^\s>]+)*[ \t]+([^>]*)>")
_TAG = re.compile(r"<[^>]*>")
# "Alice:" / "Dr. Bob Smith:" — one to three capitalised words, then a colon.
_NAME_PREFIX = re.compile(r"^\s*-?\s*([A-Z][\w'.\-]*(?: [A-Z][\w'.\-]*){0,2}):\s+(?=\S)")
_TITLE_NOTE = re.compile(r"^\s*title\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class _Piece:
    speaker: str | None
    text: str
    start: float
    end: float


@dataclass
class _Turn:
    speaker: str | None
    pieces: list[_Piece] = field(default_factory=list)


def _clean(text: str) -> str:
    return collapse_ws(html.unescape(_TAG.sub("", text)))


def _pieces(raw: str, start: float, end: float, current: str | None) -> list[_Piece]:
    """Splits one caption by speaker; unlabelled lines keep the speaker that spoke last."""
    out: list[_Piece] = []
    for line in raw.splitlines():
        parts = _VOICE.split(line)
        # parts: [text, name, text, name, text, ...]; text before the first tag keeps `current`.
        for i, part in enumerate(parts):
            if i % 2 == 1:
                current = collapse_ws(part) or current
                continue
            text = _clean(part)
            if not text:
                continue
            if i == 0:
                match = _NAME_PREFIX.match(text)
                if match:
                    current = match.group(1)
                    text = text[match.end() :]
            if out and out[-1].speaker == current:
                out[-1].text += " " + text
            else:
                out.append(_Piece(current, text, start, end))
    return out


def _turn_section(index: int, turn: _Turn) -> Section:
    prefix = f"{turn.speaker}: " if turn.speaker else ""
    text = prefix
    spans: list[TimedSpan] = []
    for n, piece in enumerate(turn.pieces):
        if n:
            text += " "
        # The first span also covers the "Name: " prefix so every char has a time.
        start_char = 0 if n == 0 else len(text)
        text += piece.text
        spans.append(TimedSpan(start_char, len(text), piece.start, piece.end, turn.speaker))
    start = min(p.start for p in turn.pieces)
    end = max(p.end for p in turn.pieces)
    metadata = {
        "start": start,
        "end": end,
        "start_ts": format_ts(start),
        "end_ts": format_ts(end),
        "speakers": [turn.speaker] if turn.speaker else [],
    }
    return Section(text=text, locator=f"t{index}", metadata=metadata, spans=tuple(spans))


class VttLoader:
    suffixes: tuple[str, ...] = (".vtt",)

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        text, warnings = decode_utf8(data)
        try:
            vtt = webvtt.from_string(text)
        except (MalformedFileError, MalformedCaptionError, ValueError) as exc:
            raise IngestError(source, f"invalid WebVTT: {exc}") from exc
        # webvtt-py silently drops cue blocks it cannot parse; count them so the user knows.
        dropped = sum("-->" in line for line in text.splitlines()) - len(vtt.captions)
        if not vtt.captions:
            detail = f" ({dropped} malformed cue(s) skipped)" if dropped > 0 else ""
            raise IngestError(source, f"no cues: the WebVTT file has no valid captions{detail}")
        if dropped > 0:
            warnings = [*warnings, f"{dropped} malformed cue(s) skipped"]

        turns: list[_Turn] = []
        speaker: str | None = None
        for caption in vtt.captions:
            start = caption.start_time.in_milliseconds() / 1000
            end = caption.end_time.in_milliseconds() / 1000
            for piece in _pieces(caption.raw_text, start, end, speaker):
                speaker = piece.speaker
                if turns and turns[-1].speaker == piece.speaker:
                    turns[-1].pieces.append(piece)
                else:
                    turns.append(_Turn(piece.speaker, [piece]))
        if not turns:
            raise IngestError(source, "no cues with text")

        sections = tuple(_turn_section(i, t) for i, t in enumerate(turns))
        title = self._title(vtt) or path.stem
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="vtt",
                title=title,
                sections=sections,
                metadata={"title": title, "duration": max(s.metadata["end"] for s in sections)},
                warnings=tuple(warnings),
            )
        ]

    @staticmethod
    def _title(vtt: webvtt.WebVTT) -> str:
        notes = [*vtt.header_comments, *vtt.metadata]
        for caption in vtt.captions:
            notes.extend(caption.comments)
        notes.extend(vtt.footer_comments)
        for note in notes:
            match = _TITLE_NOTE.search(note)
            if match:
                return match.group(1)
        return ""
