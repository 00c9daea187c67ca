"""BEIR-style JSONL corpus loader: one document per record, so evaluation ids survive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.text_utils import json_safe, read_bytes, sha256_hex
from ragchat.types import LoadedDocument, Section


class JsonlLoader:
    suffixes: tuple[str, ...] = (".jsonl",)

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        docs: list[LoadedDocument] = []
        for line_no, raw in enumerate(read_bytes(path).split(b"\n"), start=1):
            line = raw.rstrip(b"\r")
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                docs.append(_document(record, line, source, line_no))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise IngestError(source, f"line {line_no}: invalid JSON ({exc})") from exc
            except RecursionError as exc:  # e.g. [[[[... 200,000 levels deep
                raise IngestError(source, f"line {line_no}: JSON nested too deeply") from exc
        return docs


def _document(record: Any, line: bytes, source: str, line_no: int) -> LoadedDocument:
    if not isinstance(record, dict):
        raise IngestError(source, f"line {line_no}: expected a JSON object")
    if "_id" not in record:
        raise IngestError(source, f"line {line_no}: record has no '_id'")
    corpus_id = str(record["_id"])
    title = str(record.get("title") or "").strip()
    text = str(record.get("text") or "").strip()
    # The title carries many of the query terms in BEIR corpora, so it is part of the text.
    body = f"{title}\n{text}" if title and text else title or text
    extra = record.get("metadata")
    metadata: dict[str, Any] = json_safe(extra) if isinstance(extra, dict) else {}
    metadata.update(corpus_id=corpus_id, title=title)
    sections = (Section(text=body, locator="r0"),) if body else ()
    return LoadedDocument(
        doc_id=sha256_hex(line),
        source=f"{source}#{corpus_id}",
        kind="jsonl",
        title=title or corpus_id,
        sections=sections,
        metadata=metadata,
        warnings=() if body else ("record has no text",),
    )
