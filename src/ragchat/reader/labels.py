"""Which candidate sentences or rows hold a corpus answer's evidence: the labels the reader is
trained and measured with. A writer copied the evidence from the document (a sentence, a table
row's cells joined by `` | ``, list items, spoken words); a candidate is how the reader sees a
piece of a retrieved passage (``Candidate.text``: a sentence, or a row as ``Column: value;``)."""

from __future__ import annotations

import re
import unicodedata

_FOLD = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
        "–": "-",
        "—": "-",
        "‑": "-",
        "‐": "-",
        "−": "-",
        "\u00a0": " ",
    }
)
_TOKEN = re.compile(r"[a-z0-9£€$%]+(?:[.,:'][a-z0-9]+)*")
# A row as the loaders write it: "Column: value; Column: value."
_CELL_NAME = re.compile(r"(?:^|;\s+)[^;:]{1,60}:\s")


def tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    return _TOKEN.findall(text)


def _contained(part: list[str], whole: set[str]) -> float:
    return sum(t in whole for t in part) / len(part) if part else 0.0


def row_cells(text: str) -> list[str]:
    """A row's values without their column names ("Adult; £385"), [] when not a row."""
    if len(_CELL_NAME.findall(text)) < 2:
        return []
    return [c for c in _CELL_NAME.split(text) if c.strip(" .;")]


def evidence_match(candidate: str, evidence: str) -> float:
    """How well ``candidate`` is the evidence (0–1): a row whose cells are the evidence's
    cells, a sentence that is (most of) one of the evidence's parts, or one that holds most of
    a part."""
    parts = [p for p in evidence.split(" | ") if tokens(p)]
    cand_tokens = tokens(candidate)
    if not parts or not cand_tokens:
        return 0.0
    cand_set = set(cand_tokens)
    cells = row_cells(candidate)
    if cells and len(parts) > 1:
        # a table row: every evidence cell in the row
        cell_tokens = set(tokens(" ".join(cells)))
        share = sum(_contained(tokens(p), cell_tokens) >= 0.99 for p in parts) / len(parts)
        return share
    best = 0.0
    if len(parts) > 1:  # list items or steps quoted together as one sentence
        all_tokens = set(tokens(" ".join(parts)))
        inside_all = _contained(cand_tokens, all_tokens)
        if inside_all >= 0.85 and len(cand_tokens) >= 4:
            best = 0.8
    for part in parts:
        part_tokens = tokens(part)
        if not part_tokens:
            continue
        part_set = set(part_tokens)
        # the candidate is inside the evidence part and the part inside the candidate
        inside = _contained(cand_tokens, part_set)
        covers = _contained(part_tokens, cand_set)
        best = max(best, min(inside, covers) if len(parts) == 1 else min(inside, covers, 1.0))
        if covers >= 0.8 and inside >= 0.4:
            best = max(best, 0.85)
        if inside >= 0.9 and len(cand_tokens) >= 4:
            best = max(best, 0.8 * inside)
    return best


def is_evidence(candidate: str, evidence: str) -> bool:
    return evidence_match(candidate, evidence) >= 0.7
