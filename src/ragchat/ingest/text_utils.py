"""Small text helpers shared by loaders and the chunker; kept pure so they are easy to test."""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from bisect import bisect_left
from pathlib import Path
from typing import Any

from ragchat.errors import IngestError

# A sentence ends at . ! ? (optionally closed by quotes/brackets) followed by whitespace.
SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)")
SENTENCE_BREAK = re.compile(r"[.!?][\"'”’)\]]*\s+")

_WS_RUN = re.compile(r"\s+")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes:
    """Reads a file, turning OS errors into an ``IngestError`` that names it."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(str(path), f"cannot read file: {exc.strerror or exc}") from exc


def too_much_text(limit: int) -> str:
    """The reason a file over the extracted-text cap fails (``IngestLimits.max_file_chars``)."""
    return f"too much text: over {limit:,} characters extracted (the limit per file)"


def decode_utf8(data: bytes) -> tuple[str, list[str]]:
    """Decodes leniently: a stray byte should cost a character, not the whole file."""
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        text = data.decode("utf-8-sig", errors="replace")
        return text, ["file is not valid UTF-8; undecodable bytes were replaced with U+FFFD"]


def format_ts(seconds: float) -> str:
    """Seconds → ``HH:MM:SS.mmm``, the form WebVTT uses and citations show."""
    ms = round(seconds * 1000)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}"


def normalize_ws(text: str) -> str:
    """Collapses space runs but keeps line and paragraph breaks, so chunks stay readable.

    Built on ``str.split`` rather than regexes: it is several times faster on large corpora.
    """
    lines: list[str] = []
    blank = True
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = " ".join(raw.split())
        if line:
            lines.append(line)
            blank = False
        elif not blank:
            lines.append("")
            blank = True
    if lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def collapse_ws(text: str) -> str:
    """All whitespace to single spaces: for comparing texts and one-line captions."""
    return _WS_RUN.sub(" ", text).strip()


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """``normalize_ws`` plus, for every output char, its index in the input.

    Transcript spans are char offsets; the map lets them survive normalisation.
    """
    out: list[str] = []
    idx: list[int] = []
    for i, ch in enumerate(text):
        if ch == "\r":
            ch = "\n"
            if i + 1 < len(text) and text[i + 1] == "\n":
                continue
        if ch.isspace() and ch != "\n":
            if not out or out[-1] in " \n":
                continue
            ch = " "
        if ch == "\n":
            if out and out[-1] == " ":
                out.pop()
                idx.pop()
            if not out or (len(out) >= 2 and out[-1] == "\n" and out[-2] == "\n"):
                continue
        out.append(ch)
        idx.append(i)
    while out and out[-1] in " \n":
        out.pop()
        idx.pop()
    return "".join(out), idx


def remap_offset(index_map: list[int], original: int) -> int:
    """Position in normalised text of the first char at or after ``original``."""
    return bisect_left(index_map, original)


def json_safe(value: Any) -> Any:
    """Metadata is stored as JSON: dates become ISO strings, unknown objects strings."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return str(value)
