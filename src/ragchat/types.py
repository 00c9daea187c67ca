"""Data that flows between stages: loaders produce ``LoadedDocument``; the chunker turns them into
``Chunk``; indexes store chunks; retrievers return ``RetrievalResult`` of ``Hit``; a reply cites
hits as ``Citation``; a conversation's earlier messages are ``HistoryMessage`` (the store keeps
them, agents read them); ``GenerationOptions`` are one node's knobs for the chat model (the
settings give each node its own)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

DocKind = Literal[
    "pdf",
    "markdown",
    "vtt",
    "text",
    "jsonl",
    "docx",
    "pptx",
    "spreadsheet",
    "html",
    "epub",
    "image",
]

NO_ANSWER = "NO_ANSWER"


@dataclass(frozen=True)
class Exclude:
    """A filter value meaning "anything but these", e.g. ``{"doc_id": Exclude(("a", "b"))}``:
    the documents a user may not see. Kept apart from inclusion filters because a short
    exclusion list over a large collection is served by over-fetching, not by enumerating
    every allowed row."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Only:
    """What a visibility rule resolves to when it must fail closed: only these values pass.

    A shared store (Qdrant) has no snapshot, so a document another process is committing can
    be searchable before this process has read its owner; an exclusion list would let it
    through, an allowlist does not."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class ExcludeResolved:
    """An ``Exclude`` whose values are read from the very knowledge-base state a search runs
    on (``resolve(base)``), not from one read a moment earlier: a document committed between
    the two (another user's upload) would otherwise slip past the filter. ``resolve`` may
    answer ``Only`` instead, which becomes an inclusion filter (a list of values)."""

    resolve: Callable[[Any], Sequence[str] | Only]

    def against(self, base: Any) -> Exclude | list[str]:
        found = self.resolve(base)
        if isinstance(found, Only):
            return list(found.values)
        return Exclude(tuple(found))


@dataclass(frozen=True)
class DocumentLabel:
    """How one user knows a document shared by identical bytes: the name of *their* copy.

    Two uploads of the same bytes are one document (its id is their SHA-256); without a label
    the second uploader would see the first one's file name in citations and listings."""

    source: str
    title: str


@dataclass(frozen=True)
class TimedSpan:
    """A character range of a transcript section and the time/speaker it was spoken at."""

    start_char: int
    end_char: int
    start: float  # seconds
    end: float  # seconds
    speaker: str | None = None


@dataclass(frozen=True)
class Section:
    """A unit a loader found: a PDF page, a Markdown heading section, a transcript turn group.

    ``locator`` is the short id part used in chunk ids (``p3``, ``s2``, ``t0``); ``metadata``
    carries what a citation shows (page, heading path, section id, speakers ...).
    """

    text: str
    locator: str
    metadata: dict[str, Any] = field(default_factory=dict)
    spans: tuple[TimedSpan, ...] = ()
    # A table: one row per line (``ingest.tables``), which the chunker never splits, and the
    # number a user knows each line's row by (a spreadsheet's row numbers; may be empty).
    table: bool = False
    row_numbers: tuple[int, ...] = ()


@dataclass(frozen=True)
class LoadedDocument:
    doc_id: str  # SHA-256 of the file bytes (or of the record, for JSONL corpora)
    source: str  # file path as given, or "file.jsonl#<_id>"
    kind: DocKind
    title: str
    sections: tuple[Section, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chunk:
    """A searchable child chunk or a parent returned for context.

    ``position`` is the child's order within its document, used for neighbour expansion;
    ``parent_id`` links a child to its parent (``None`` for parents themselves).
    """

    chunk_id: str
    doc_id: str
    text: str
    position: int
    parent_id: str | None = None
    is_parent: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        return str(self.metadata.get("source", ""))

    def named(self, label: DocumentLabel) -> Chunk:
        """This chunk under another name for its document (see ``DocumentLabel``)."""
        md = dict(self.metadata, source=label.source)
        for key in ("doc_title", "title"):
            if key in md:
                md[key] = label.title
        return replace(self, metadata=md)

    def location(self) -> str:
        """Human-readable place in the source: page, slide, sheet rows, section path or time."""
        md = self.metadata
        if "start_ts" in md:
            who = ", ".join(md.get("speakers", []))
            return f"{md['start_ts']}–{md.get('end_ts', '')}" + (f" ({who})" if who else "")
        if "page" in md:
            return f"page {md['page']}"
        if "slide" in md:
            title = md.get("slide_title") or ""
            return f"slide {md['slide']}" + (f" — {title}" if title else "")
        if "sheet" in md:
            sheet, rows = str(md["sheet"]), md.get("rows")
            if not rows:
                return sheet
            a, b = rows[0], rows[-1]
            span = f"row {a}" if a == b else f"rows {a}–{b}"
            return f"{sheet}, {span}" if sheet else span
        if md.get("heading_path"):
            return " > ".join(md["heading_path"])
        return ""


@dataclass
class Hit:
    chunk: Chunk
    score: float  # the score the ranking used
    scores: dict[str, float] = field(default_factory=dict)  # components: dense, bm25, fused, rerank
    context: str | None = None  # parent text (or expanded neighbours) handed to the answerer
    context_ids: tuple[str, ...] = ()  # chunk ids the context was built from
    # Transcripts: the captions of the text the answerer reads (``context``, else the chunk's
    # text) as char ranges into that text, so a quote can cite the time it was spoken.
    cues: tuple[TimedSpan, ...] = ()


@dataclass
class RetrievalResult:
    query: str
    hits: list[Hit]
    no_answer: bool = False
    relevance: float = 0.0  # best cosine among the first gate_window hits: what the gate uses
    mode: str = "hybrid"
    expanded_queries: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds per step
    notes: list[str] = field(default_factory=list)


Role = Literal["user", "assistant", "system"]


@dataclass(frozen=True)
class HistoryMessage:
    role: Role
    content: str
    agent: str | None = None


@dataclass(frozen=True)
class Citation:
    """One numbered source of a reply: ``[n]`` in the text refers to ``index`` n."""

    index: int
    chunk_id: str
    source: str
    title: str
    # "page 3", "Ibuprofen > Side effects", "00:01:02.800–00:01:58.500 (Dr. X)",
    # "slide 3 — Pricing", "Prices, rows 2–14"
    location: str
    score: float
    preview: str
    page: int | None = None
    section_path: tuple[str, ...] = ()
    start_ts: str | None = None
    end_ts: str | None = None
    speakers: tuple[str, ...] = ()
    chapter: str | None = None
    slide: int | None = None
    sheet: str | None = None
    rows: tuple[int, int] | None = None  # first and last spreadsheet row of the passage
    # The words an extractive answer quoted from this source (transcripts: the cues whose time
    # range start_ts/end_ts give); "" when the whole passage is the reference.
    quote: str = ""
    # The retrieved passage cited (its text, rows, cues), so the citation can be narrowed to
    # what the reply quoted (``agents/shared/pinpoint.py``); never serialized.
    hit: Hit | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "hit"}
        data["section_path"] = list(self.section_path)
        data["speakers"] = list(self.speakers)
        data["rows"] = None if self.rows is None else list(self.rows)
        return data


def chunk_cues(chunk: Chunk) -> tuple[TimedSpan, ...]:
    """The ``cues`` metadata the chunker gives transcript chunks, as ``TimedSpan``s."""
    out: list[TimedSpan] = []
    for cue in chunk.metadata.get("cues") or ():
        try:
            a, b, start, end, speaker = cue
            out.append(TimedSpan(int(a), int(b), float(start), float(end), str(speaker) or None))
        except (TypeError, ValueError):
            continue
    return tuple(out)


# Markdown markup a preview should not show: heading marks, emphasis, code ticks, table rules.
_MARKUP = re.compile(
    r"(?m)^\s{0,3}#{1,6}\s+|\*\*|__|`|^\s*[-*+]\s+|^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*$"
)


def plain_preview(text: str) -> str:
    """``text`` without Markdown markup, on one line."""
    return " ".join(_MARKUP.sub("", text or "").split())


def citation_from_hit(hit: Hit, index: int, *, preview_chars: int = 240) -> Citation:
    md = hit.chunk.metadata
    text = plain_preview(hit.chunk.text or "")
    chapter = md.get("chapter")
    rows = md.get("rows")
    return Citation(
        index=index,
        chunk_id=hit.chunk.chunk_id,
        source=str(md.get("source", "")),
        title=str(md.get("doc_title") or md.get("title") or ""),
        location=hit.chunk.location(),
        score=round(float(hit.score), 4),
        preview=text[:preview_chars] + ("…" if len(text) > preview_chars else ""),
        page=int(md["page"]) if "page" in md else None,
        section_path=tuple(md.get("heading_path") or ()),
        start_ts=md.get("start_ts"),
        end_ts=md.get("end_ts"),
        speakers=tuple(md.get("speakers") or ()),
        chapter=None if chapter is None else str(chapter),
        slide=int(md["slide"]) if "slide" in md else None,
        sheet=(str(md["sheet"]) or None) if "sheet" in md else None,
        rows=(int(rows[0]), int(rows[-1])) if rows else None,
        hit=hit,
    )


@dataclass(frozen=True)
class GenerationOptions:
    """Per-node knobs (each graph node may use its own temperature and token budget)."""

    temperature: float = 0.2
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
