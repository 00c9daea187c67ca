"""Evaluation inputs and gold matching.

Two gold forms: BEIR qrels (query → corpus id, for knowledge bases ingested from a JSONL corpus,
where a chunk's corpus id is ``metadata["corpus_id"]``) and section golds (query → file and
section heading, ``p<N>`` page or ``HH:MM:SS-HH:MM:SS`` time range, for knowledge bases built from
files; the query is an id into a queries file or, written by hand, the question itself). Both are
turned into one shape, qrels over *unit ids*, so the metrics never care which.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragchat.errors import ConfigError
from ragchat.types import Chunk, Hit

Qrels = dict[str, dict[str, int]]  # query id → unit id → graded relevance


class EvalDataError(ConfigError):
    """An evaluation input file is malformed; the message names the file and line."""


@dataclass(frozen=True)
class Query:
    qid: str
    text: str


@dataclass(frozen=True)
class SectionGold:
    """One answering place of a query. Exactly one of heading, page, time range is set."""

    file: str
    section: str
    heading: str | None = None
    page: int | None = None
    start: float | None = None  # seconds
    end: float | None = None

    @property
    def unit_id(self) -> str:
        return f"{self.file}::{self.section}"


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalDataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise EvalDataError(f"{path}: not UTF-8 text: {exc}") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line.rstrip("\r\n")


def load_queries(path: Path) -> list[Query]:
    """BEIR ``queries.jsonl``: one ``{"_id", "text"}`` object a line, kept in file order."""
    queries: list[Query] = []
    seen: set[str] = set()
    for number, line in _lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalDataError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
        if not isinstance(record, dict) or "_id" not in record or "text" not in record:
            raise EvalDataError(f'{path}:{number}: expected an object with "_id" and "text"')
        qid, text = str(record["_id"]), str(record["text"])
        if qid in seen:
            raise EvalDataError(f"{path}:{number}: duplicate query id {qid!r}")
        if not text.strip():
            raise EvalDataError(f"{path}:{number}: query {qid!r} has empty text")
        seen.add(qid)
        queries.append(Query(qid, text))
    return queries


def _rows(path: Path, header: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """Tab-separated rows (whitespace when a line has no tab); a header line is skipped."""
    for number, line in _lines(path):
        fields = [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]
        if number == 1 and [f.lower() for f in fields] == list(header):
            continue
        yield number, fields


def load_qrels(path: Path) -> Qrels:
    """BEIR qrels TSV ``query-id corpus-id score`` (header optional). TREC's four-column form
    ``qid 0 docid rel`` is accepted too, since many corpora ship it."""
    qrels: Qrels = {}
    for number, fields in _rows(path, ("query-id", "corpus-id", "score")):
        if len(fields) == 4:
            fields = [fields[0], fields[2], fields[3]]
        if len(fields) != 3 or not all(fields):
            raise EvalDataError(
                f"{path}:{number}: expected 3 tab-separated fields (query-id, corpus-id, "
                f"score), got {len(fields)}"
            )
        qid, doc, score = fields
        try:
            rel = int(score)
        except ValueError:
            raise EvalDataError(f"{path}:{number}: score {score!r} is not an integer") from None
        qrels.setdefault(qid, {})[doc] = rel
    return qrels


_PAGE = re.compile(r"^p(\d+)$", re.IGNORECASE)
_TS = r"(\d+(?::\d{1,2}){0,2}(?:[.,]\d+)?)"
_RANGE = re.compile(rf"^{_TS}\s*-\s*{_TS}$")


def parse_timestamp(text: str) -> float:
    """``HH:MM:SS(.mmm)``, ``MM:SS`` or plain seconds → seconds."""
    seconds = 0.0
    for part in text.replace(",", ".").split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def parse_section(file: str, section: str) -> SectionGold:
    """Classifies the section field: page ``p<N>``, time range, or else a heading."""
    page = _PAGE.match(section)
    if page:
        return SectionGold(file, section, page=int(page.group(1)))
    span = _RANGE.match(section)
    if span and ":" in section:
        start, end = parse_timestamp(span.group(1)), parse_timestamp(span.group(2))
        if end < start:
            raise ValueError(f"time range {section!r} ends before it starts")
        return SectionGold(file, section, start=start, end=end)
    return SectionGold(file, section, heading=section)


ID_HEADER = ("query-id", "file", "section")
QUESTION_HEADER = ("question", "file", "section")


def _section_header(path: Path) -> tuple[str, ...] | None:
    for _, line in _lines(path):  # the first non-comment line
        fields = tuple(f.strip().lower() for f in line.split("\t"))
        return fields if fields in (ID_HEADER, QUESTION_HEADER) else None
    return None


def _section_rows(path: Path, first: str) -> Iterator[tuple[int, str, SectionGold]]:
    """``(line, first field, gold)`` of each row; only tabs separate fields (a question or a
    section may contain spaces)."""
    for index, (number, line) in enumerate(_lines(path)):
        fields = [f.strip() for f in line.split("\t")]
        if index == 0 and tuple(f.lower() for f in fields) in (ID_HEADER, QUESTION_HEADER):
            continue
        if len(fields) != 3 or not all(fields):
            hint = "" if "\t" in line else " (no tab on this line: separate fields with tabs)"
            raise EvalDataError(
                f"{path}:{number}: expected 3 tab-separated fields ({first}, file, section), "
                f"got {len([f for f in fields if f])} non-empty{hint}"
            )
        key, file, section = fields
        try:
            gold = parse_section(file.replace("\\", "/"), section)
        except ValueError as exc:
            raise EvalDataError(f"{path}:{number}: {exc}") from None
        yield number, key, gold


def load_sections(path: Path) -> dict[str, list[SectionGold]]:
    """Section golds TSV ``query-id file section`` (header optional), the questions being in a
    separate queries file."""
    golds: dict[str, list[SectionGold]] = {}
    for _, qid, gold in _section_rows(path, "query-id"):
        if gold not in golds.setdefault(qid, []):
            golds[qid].append(gold)
    return golds


def load_question_sections(path: Path) -> tuple[list[Query], dict[str, list[SectionGold]]]:
    """Section golds TSV ``question file section``, the form people write by hand: no separate
    queries file. Rows with the same question (up to spacing and case) make one query with
    several gold sections; ids are ``q1``, ``q2``… in order of first appearance, so the
    per-query report can be read against the file."""
    queries: list[Query] = []
    golds: dict[str, list[SectionGold]] = {}
    ids: dict[str, str] = {}
    for _, question, gold in _section_rows(path, "question"):
        key = " ".join(question.split()).casefold()
        if key not in ids:
            ids[key] = f"q{len(ids) + 1}"
            queries.append(Query(ids[key], question))
        qid = ids[key]
        if gold not in golds.setdefault(qid, []):
            golds[qid].append(gold)
    return queries, golds


def read_sections(
    path: Path, *, queries_given: bool
) -> tuple[dict[str, list[SectionGold]], list[Query] | None]:
    """Either form of section golds → golds and, when inline, the questions. The header decides
    (``query-id`` or ``question``); without one the file holds query ids when a queries file is
    given, questions otherwise."""
    header = _section_header(path)
    if header == QUESTION_HEADER or (header is None and not queries_given):
        if queries_given:
            raise EvalDataError(
                f"{path}: holds the questions (header 'question'): give no queries file"
            )
        queries, golds = load_question_sections(path)
        if header is None and queries and not any(" " in q.text for q in queries):
            raise EvalDataError(
                f"{path}: the first column looks like query ids, not questions: give the "
                "queries file (--queries), or start the file with the header line "
                "question<TAB>file<TAB>section"
            )
        return golds, queries
    if not queries_given:
        raise EvalDataError(
            f"{path}: names query ids (header 'query-id'): give the queries file (--queries), "
            "or write the question itself in the first column under a 'question' header"
        )
    return load_sections(path), None


def section_qrels(golds: dict[str, list[SectionGold]]) -> Qrels:
    return {qid: {g.unit_id: 1 for g in gs} for qid, gs in golds.items()}


class UnitMapper(Protocol):
    """Maps a retrieved chunk to the gold units it stands for (never empty, so every hit takes
    a rank even when it matches no gold)."""

    def units(self, chunk: Chunk) -> list[str]: ...


class CorpusUnits:
    """BEIR corpora: the unit is the corpus document id; chunks without one (a knowledge base
    not ingested from JSONL) fall back to their document id and so never match."""

    def __init__(self) -> None:
        self.missing = 0  # hits without corpus_id: a hint that the KB is not the corpus

    def units(self, chunk: Chunk) -> list[str]:
        corpus_id = chunk.metadata.get("corpus_id")
        if corpus_id is None:
            self.missing += 1
            return [f"doc:{chunk.doc_id}"]
        return [str(corpus_id)]


def _norm(text: object) -> str:
    return " ".join(str(text).split()).casefold()


def _as_float(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def matches(gold: SectionGold, chunk: Chunk) -> bool:
    """Whether a chunk lies in the gold section. The file is matched by ``source`` ending with
    it (ingested paths are absolute or relative to wherever ingest ran)."""
    source = chunk.source.replace("\\", "/")
    if source != gold.file and not source.endswith("/" + gold.file):
        return False
    md = chunk.metadata
    if gold.heading is not None:
        path = md.get("heading_path") or []
        names = {_norm(md.get("heading", ""))} | ({_norm(path[-1])} if path else set())
        return _norm(gold.heading) in names
    if gold.page is not None:
        return md.get("page") is not None and str(md.get("page")) == str(gold.page)
    start, end = _as_float(md.get("start")), _as_float(md.get("end"))
    if start is None or end is None or gold.start is None or gold.end is None:
        return False
    return start < gold.end and end > gold.start  # overlap of two time ranges


class SectionUnits:
    """Section golds: a chunk's units are the gold sections it lies in; a chunk in no gold
    section gets its own natural unit (file + heading / page / chunk), so that several
    non-relevant chunks of one section still collapse into one rank."""

    def __init__(self, golds: Sequence[SectionGold]) -> None:
        self._by_name: dict[str, list[SectionGold]] = {}
        for gold in sorted(set(golds), key=lambda g: g.unit_id):
            self._by_name.setdefault(gold.file.rsplit("/", 1)[-1], []).append(gold)

    def units(self, chunk: Chunk) -> list[str]:
        name = chunk.source.replace("\\", "/").rsplit("/", 1)[-1]
        found = [g.unit_id for g in self._by_name.get(name, []) if matches(g, chunk)]
        if found:
            return found
        md = chunk.metadata
        if md.get("heading_path") or md.get("heading"):
            return [f"{chunk.source}::{md.get('heading') or md['heading_path'][-1]}"]
        if md.get("page") is not None:
            return [f"{chunk.source}::p{md['page']}"]
        return [f"{chunk.source}::{chunk.chunk_id}"]


def ranked_units(hits: Sequence[Hit], mapper: UnitMapper, depth: int) -> list[str]:
    """Hits → ranked unique unit ids: a unit's first occurrence keeps its rank, later chunks of
    the same unit are dropped (so several chunks of one document count once)."""
    out: dict[str, None] = {}
    for hit in hits:
        for unit in mapper.units(hit.chunk):
            out.setdefault(unit, None)
        if len(out) >= depth:
            break
    return list(out)[:depth]
