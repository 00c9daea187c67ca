"""Plain-text loader: one section holding the whole file; the chunker does the windowing."""

from __future__ import annotations

import re
from pathlib import Path

from ragchat.ingest.text_utils import decode_utf8, normalize_ws, read_bytes, sha256_hex
from ragchat.types import LoadedDocument, Section

_BLANK_LINES = re.compile(r"\n\s*\n")


class TextLoader:
    suffixes: tuple[str, ...] = (".txt",)

    def load(self, path: Path) -> list[LoadedDocument]:
        data = read_bytes(path)
        text, warnings = decode_utf8(data)
        paragraphs = [
            normalize_ws(p)
            for p in _BLANK_LINES.split(text.replace("\r\n", "\n").replace("\r", "\n"))
        ]
        body = "\n\n".join(p for p in paragraphs if p)
        sections: tuple[Section, ...] = ()
        if body:
            sections = (Section(text=body, locator="s0", metadata={"section_id": "s0"}),)
        else:
            warnings = [*warnings, "empty file: nothing to index"]
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=str(path),
                kind="text",
                title=path.stem,
                sections=sections,
                metadata={"title": path.stem},
                warnings=tuple(warnings),
            )
        ]
