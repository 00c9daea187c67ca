"""Mapping ragchat's answers onto the shapes the replaced systems' clients read (what the
routes in ``routes/compat.py`` return); no logic of its own beyond the renaming."""

from __future__ import annotations

import re
from typing import Any

from .query import QueryAnswer

_NUMBER = re.compile(r"\d+")
SELECTED_TEXT_ID = "selected-text"


def chapter_number(chapter: str | None) -> int | None:
    """ "3", "Chapter 3" or "ch3-sensors" → 3; a chapter without a number → None."""
    match = _NUMBER.search(chapter or "")
    return int(match.group()) if match else None


def textbook_sources(answer: QueryAnswer, context: str | None) -> list[dict[str, Any]]:
    """``RetrievedChunk`` fields; selected-text-only mode cites the passage it was given."""
    if answer.mode == "selected-text-only" and context:
        return [
            {
                "chunk_id": SELECTED_TEXT_ID,
                "chapter_id": None,
                "section_id": "selected",
                "section_title": "Selected Text",
                "preview_text": context[:200],
                "relevance_score": 1.0,
            }
        ]
    out = []
    for s in answer.sources:
        section = str(s.get("section") or s.get("location") or "")
        out.append(
            {
                "chunk_id": str(s.get("chunk_id") or ""),
                "chapter_id": chapter_number(s.get("chapter")),
                "section_id": str(s.get("location") or section),
                "section_title": section.split(" > ")[-1] if section else str(s.get("title")),
                "preview_text": str(s.get("preview") or "")[:200],
                "relevance_score": float(s.get("score") or 0.0),
            }
        )
    return out
