"""The questions and gold of a retrieval evaluation, from the CLI's files: corpus qrels
(``--qrels``, with ``--queries``) or section golds (``--sections``, whose TSV may hold the
questions itself so a hand-written file needs nothing else)."""

from __future__ import annotations

from pathlib import Path

from ragchat.errors import ConfigError
from ragchat.eval.chunk_units import ChunkUnits, is_chunk_qrels
from ragchat.eval.data import (
    CorpusUnits,
    Query,
    SectionGold,
    SectionUnits,
    load_qrels,
    load_queries,
    load_sections,
    read_sections,
    section_qrels,
)
from ragchat.eval.retrieval import Gold


def load_gold(qrels: Path | None, sections: Path | None) -> Gold:
    """Exactly one gold form: corpus qrels or section golds (by query id)."""
    if (qrels is None) == (sections is None):
        raise ConfigError("give exactly one of --qrels (corpus ids) or --sections (file sections)")
    if qrels is not None:
        judged = load_qrels(qrels)
        if is_chunk_qrels(judged):  # `ragchat eval synth` output: chunk:<id> gold
            return Gold(judged, ChunkUnits(), "chunks")
        return Gold(judged, CorpusUnits(), "corpus")
    assert sections is not None
    return section_gold(load_sections(sections))


def section_gold(golds: dict[str, list[SectionGold]]) -> Gold:
    return Gold(
        section_qrels(golds), SectionUnits([g for gs in golds.values() for g in gs]), "sections"
    )


def load_inputs(
    queries: Path | None, qrels: Path | None, sections: Path | None
) -> tuple[list[Query], Gold]:
    """The questions and their gold: from ``queries``, or from the sections TSV itself when
    its first column is the question (see ``read_sections`` for how the form is told)."""
    if sections is not None and qrels is None:
        golds, inline = read_sections(sections, queries_given=queries is not None)
        gold = section_gold(golds)
        if inline is not None:
            return inline, gold
    else:
        gold = load_gold(qrels, sections)  # refuses both or neither
    if queries is None:
        raise ConfigError("--queries is needed with --qrels")
    return load_queries(queries), gold
