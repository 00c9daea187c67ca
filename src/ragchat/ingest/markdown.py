"""Markdown loader: frontmatter becomes metadata, ATX headings become sections with their path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ragchat.errors import IngestError
from ragchat.ingest.tables import table_section
from ragchat.ingest.text_utils import decode_utf8, json_safe, read_bytes, sha256_hex
from ragchat.types import LoadedDocument, Section

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SCALARS = (str, int, float, bool)
# A GFM table's delimiter row (``| --- | :-: |``): only text with one is parsed for tables.
_DELIMITER_ROW = re.compile(r"^[ \t>]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$", re.M)
_GFM = MarkdownIt("commonmark", {"html": False}).enable("table")


@dataclass
class _RawSection:
    heading_path: list[str]
    level: int = 0  # 0 for the text before the first heading
    lines: list[str] = field(default_factory=list)


def parse_frontmatter(text: str, source: str) -> tuple[dict[str, Any], str]:
    """Uses python-frontmatter's handlers but rejects what it would silently ignore."""
    handler = frontmatter.detect_format(text, frontmatter.handlers)
    if handler is None:
        return {}, text
    try:
        fm, content = handler.split(text)
    except ValueError:
        return {}, text
    try:
        data = handler.load(fm)
    except yaml.YAMLError as exc:
        raise IngestError(source, f"invalid YAML frontmatter: {exc}") from exc
    except Exception as exc:  # JSON/TOML handlers raise their own types
        raise IngestError(source, f"invalid frontmatter: {exc}") from exc
    if data is None:
        return {}, content
    if not isinstance(data, dict):
        raise IngestError(source, "frontmatter must be a mapping of keys to values")
    return json_safe(data), content


def _closes(line: str, fence: str) -> bool:
    """A closing fence uses the opening character, at least as many times, and nothing else."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def split_headings(content: str) -> list[_RawSection]:
    """Splits on ATX headings outside fenced code; each section starts with its heading line."""
    sections = [_RawSection(heading_path=[])]
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    for line in content.splitlines():
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes(line, fence):
                fence = None
            sections[-1].lines.append(line)
            continue
        if fence_match:
            fence = fence_match.group(1)
            sections[-1].lines.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            title = (heading.group(2) or "").strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            path = [t for _, t in stack]
            sections.append(_RawSection(heading_path=path, level=level, lines=[line]))
        else:
            sections[-1].lines.append(line)
    return sections


Table = tuple[list[str], list[list[str]]]


def _cell(inline: Token) -> str:
    """A cell's text without its markup (``**400 mg**`` → ``400 mg``)."""
    return "".join(
        child.content
        for child in inline.children or ()
        if child.type in ("text", "code_inline", "html_inline", "softbreak")
    )


def split_tables(body: str) -> list[str | Table]:
    """``body`` as prose pieces and GFM tables (header, rows), in order.

    markdown-it-py (already installed with rich) decides what is a table, so a pipe in prose or
    in fenced code is not one, and escaped pipes and inline markup in cells come out right.
    """
    if "|" not in body or not _DELIMITER_ROW.search(body):
        return [body]
    lines = body.split("\n")
    pieces: list[str | Table] = []
    done = 0
    table: Table | None = None
    span = (0, 0)
    row: list[str] | None = None
    for token in _GFM.parse(body):
        if token.type == "table_open" and token.map:
            table, span = ([], []), (token.map[0], token.map[1])
        elif table is None:
            continue
        elif token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(_cell(token))
        elif token.type == "tr_close" and row is not None:
            if table[0] or table[1]:
                table[1].append(row)
            else:
                table[0].extend(row)
            row = None
        elif token.type == "table_close":
            prose = "\n".join(lines[done : span[0]]).strip()
            if prose:
                pieces.append(prose)
            pieces.append(table)
            done, table = span[1], None
    rest = "\n".join(lines[done:]).strip()
    if rest:
        pieces.append(rest)
    return pieces


class MarkdownLoader:
    suffixes: tuple[str, ...] = (".md", ".markdown")

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        text, warnings = decode_utf8(data)
        meta, content = parse_frontmatter(text, source)
        doc_scalars = {k: v for k, v in meta.items() if v is None or isinstance(v, _SCALARS)}

        sections: list[Section] = []
        first_h1: str | None = None
        n_headed = 0
        for raw in split_headings(content):
            body = "\n".join(raw.lines).strip()
            if not body:
                continue
            if first_h1 is None and raw.level == 1 and raw.heading_path[-1]:
                first_h1 = raw.heading_path[-1]
            section_id = f"s{n_headed}"
            n_headed += 1
            section_meta: dict[str, Any] = {
                **doc_scalars,
                "heading_path": list(raw.heading_path),
                "section_id": section_id,
                "heading": raw.heading_path[-1] if raw.heading_path else "",
            }
            # A table becomes its own section of row lines, under the same heading path.
            pieces = split_tables(body)
            for k, piece in enumerate(pieces):
                locator = section_id if k == 0 else f"{section_id}.{k}"
                if isinstance(piece, str):
                    if len(pieces) > 1 and raw.level and piece == raw.lines[0].strip():
                        continue  # a heading alone: its table carries the heading path
                    sections.append(Section(text=piece, locator=locator, metadata=section_meta))
                    continue
                table = table_section(*piece, locator=locator, metadata=section_meta)
                if table is not None:
                    sections.append(table)

        fm_title = meta.get("title")
        title = str(fm_title).strip() if fm_title not in (None, "") else ""
        title = title or first_h1 or path.stem
        if not sections:
            warnings = [*warnings, "no text after frontmatter"]
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="markdown",
                title=title,
                sections=tuple(sections),
                metadata={**meta, "title": title},
                warnings=tuple(warnings),
            )
        ]
