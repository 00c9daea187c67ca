"""Text that reads but says nothing: refused with the reason, before it becomes chunks.

The caps on totals (characters, chunks per file and per upload) let through a CSV that is one
20 MB line: 40,177 chunks of column after column, inside every cap. These checks look at what
a chunk would be made of, and fail the file alone when most of it is

- one enormous line (over ``MAX_LINE_CHARS``: a data dump, a minified file);
- "words" with no boundaries (base64, hex, a line of digits): most of the text in runs of over
  ``MAX_WORD_CHARS`` characters without a space — scripts written without spaces (Chinese,
  Japanese, Thai...) count as boundaries;
- not text: undecodable bytes (U+FFFD), control and private-use characters;
- the same line, repeated thousands of times.
"""

from __future__ import annotations

import re
from collections import Counter

from ragchat.errors import IngestError
from ragchat.types import LoadedDocument

MAX_LINE_CHARS = 100_000
MAX_WORD_CHARS = 50
MIN_CHARS = 2_000  # shorter texts are judged by nothing here: a few odd lines are no harm
MAX_SHARE = 0.5  # of the text in unbroken runs, or of its lines the same one
MAX_NON_TEXT = 0.3
MIN_REPEATS = 1_000
# Runs of characters between spaces, where letters of scripts written without spaces count
# as spaces (each of them is a word of its own).
_RUN = re.compile(
    r"[^\s\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\uac00-\ud7af\uf900-\ufaff]{" + str(MAX_WORD_CHARS + 1) + ",}"
)
_NON_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd\ue000-\uf8ff]")


def reason(text: str) -> str | None:
    """Why ``text`` is not worth indexing, or None."""
    longest = max((len(line) for line in text.split("\n")), default=0)
    if longest > MAX_LINE_CHARS:
        return (
            f"one line of {longest:,} characters (at most {MAX_LINE_CHARS:,} a line): "
            "a data dump or a file without line breaks, not text to search"
        )
    if len(text) < MIN_CHARS:
        return None
    odd = len(_NON_TEXT.findall(text))
    if odd > MAX_NON_TEXT * len(text):
        return (
            f"mostly not text: {odd / len(text):.0%} of its characters are undecodable bytes "
            "or control characters (a binary file?)"
        )
    solid = len(text) - text.count(" ") - text.count("\n")
    unbroken = sum(len(m) for m in _RUN.findall(text))
    if solid and unbroken > MAX_SHARE * solid:
        return (
            f"no word boundaries: {unbroken / solid:.0%} of the text is in runs of over "
            f"{MAX_WORD_CHARS} characters without a space (encoded or binary data?)"
        )
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) >= MIN_REPEATS:
        line, count = Counter(lines).most_common(1)[0]
        if count >= MIN_REPEATS and count > MAX_SHARE * len(lines):
            shown = line if len(line) <= 40 else line[:37] + "..."
            return (
                f"the same line repeated {count:,} times ({count / len(lines):.0%} of its "
                f"lines: {shown!r})"
            )
    return None


def check(docs: list[LoadedDocument], source: str) -> None:
    """Raises ``IngestError`` naming the reason when a document of the file is degenerate."""
    for doc in docs:
        why = reason("\n".join(s.text for s in doc.sections))
        if why is not None:
            raise IngestError(source, why)
