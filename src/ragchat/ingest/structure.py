"""Sections of a document with headings (Word, HTML, EPUB) built the way Markdown's are.

A loader walks its format in reading order and reports headings, lines of text and tables;
``Outline`` turns them into sections carrying the heading path a citation shows (the same
metadata keys as ``ingest.markdown``: ``heading_path``, ``section_id``, ``heading``), with each
table its own section of row lines (``ingest.tables``) under the heading it appears under.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.tables import cell_text, table_section
from ragchat.ingest.text_utils import too_much_text
from ragchat.types import Section


class Outline:
    def __init__(
        self,
        source: str,
        *,
        base: dict[str, Any] | None = None,
        root: Sequence[str] = (),
        prefix: str = "s",
        max_chars: int | None = None,
    ) -> None:
        """``root`` starts every heading path (an EPUB chapter's title); ``prefix`` keeps
        locators unique when several outlines make one document."""
        self.source = source
        self.base = dict(base or {})
        self.root = list(root)
        self.prefix = prefix
        self.max_chars = max_chars
        self.chars = 0
        self.sections: list[Section] = []
        self.first_heading: str = ""
        self._stack: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._pieces = 0  # sections of the current heading so far
        self._n = 0  # headings seen: the section id
        self._bare = False  # the pending lines are only a heading

    @property
    def heading_path(self) -> list[str]:
        return [*self.root, *(t for _, t in self._stack)]

    def heading(self, level: int, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            return
        self._flush()
        if not self.first_heading:
            self.first_heading = title
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        if not (self.root and not self._stack and title == self.root[-1]):
            self._stack.append((level, title))
        self._n += 1
        self._pieces = 0
        self._lines.append(title)
        self._bare = True

    def line(self, text: str) -> None:
        text = text.strip()
        if text:
            self._count(len(text))
            self._lines.append(text)
            self._bare = False

    def table(self, header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> None:
        """A table's first row names its columns; a one-row table is just a line of text."""
        if not rows:
            self.line(" | ".join(t for t in map(cell_text, header) if t))
            return
        if self._bare:  # a heading alone: the table carries its heading path
            self._lines = []
        self._flush()
        section = table_section(header, rows, locator=self._locator(), metadata=self._meta())
        if section is not None:
            self._count(len(section.text))
            self.sections.append(section)
            self._pieces += 1

    def finish(self) -> list[Section]:
        self._flush()
        return self.sections

    # -- internals --------------------------------------------------------------------------

    def _count(self, n: int) -> None:
        self.chars += n
        if self.max_chars and self.chars > self.max_chars:
            raise IngestError(self.source, too_much_text(self.max_chars))

    def _locator(self) -> str:
        locator = f"{self.prefix}{self._n}"
        return locator if self._pieces == 0 else f"{locator}.{self._pieces}"

    def _meta(self) -> dict[str, Any]:
        path = self.heading_path
        return {
            **self.base,
            "heading_path": path,
            "section_id": f"{self.prefix}{self._n}",
            "heading": path[-1] if path else "",
        }

    def _flush(self) -> None:
        text = "\n".join(self._lines).strip()
        bare, self._bare = self._bare, False
        self._lines = []
        if text and not bare:  # a heading with nothing under it is in its children's paths
            self.sections.append(Section(text=text, locator=self._locator(), metadata=self._meta()))
            self._pieces += 1
