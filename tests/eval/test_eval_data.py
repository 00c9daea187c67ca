from pathlib import Path

import pytest

from ragchat.errors import ConfigError
from ragchat.eval.data import (
    CorpusUnits,
    EvalDataError,
    SectionGold,
    SectionUnits,
    load_qrels,
    load_queries,
    load_sections,
    matches,
    parse_section,
    ranked_units,
    section_qrels,
)
from ragchat.types import Chunk, Hit


def _chunk(cid: str, **md: object) -> Chunk:
    return Chunk(cid, md.pop("doc", "doc"), "text", 0, metadata=dict(md))  # type: ignore[arg-type]


def _hits(*chunks: Chunk) -> list[Hit]:
    return [Hit(c, 1.0 / (i + 1)) for i, c in enumerate(chunks)]


def test_load_queries_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "q.jsonl"
    good.write_text('{"_id": 2, "text": "first"}\n\n{"_id": "b", "text": "second"}\n')
    assert [(q.qid, q.text) for q in load_queries(good)] == [("2", "first"), ("b", "second")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n')
    with pytest.raises(EvalDataError, match=r"bad\.jsonl:2: invalid JSON"):
        load_queries(bad)
    bad.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(EvalDataError, match=r"bad\.jsonl:2: duplicate query id 'a'"):
        load_queries(bad)
    bad.write_text('{"id": "a"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1: expected an object"):
        load_queries(bad)
    with pytest.raises(EvalDataError, match="cannot read"):
        load_queries(tmp_path / "missing.jsonl")


def test_load_qrels_beir_and_trec(tmp_path: Path) -> None:
    beir = tmp_path / "qrels.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\n1\tdocA\t1\n1\tdocB\t2\n2\tdocC\t0\n")
    assert load_qrels(beir) == {"1": {"docA": 1, "docB": 2}, "2": {"docC": 0}}
    trec = tmp_path / "qrels.trec"
    trec.write_text("1 0 docA 1\n")
    assert load_qrels(trec) == {"1": {"docA": 1}}


@pytest.mark.parametrize(
    ("line", "message"),
    [("1\tdocA\n", "expected 3 tab-separated fields"), ("1\tdocA\thigh\n", "'high' is not an int")],
)
def test_malformed_qrels_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\tdocA\t1\n" + line)
    with pytest.raises(EvalDataError, match=rf"qrels\.tsv:3: .*{message}"):
        load_qrels(path)


def test_load_sections_kinds_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "sections.tsv"
    path.write_text(
        "query-id\tfile\tsection\n"
        "q1\t1_CancerGov_QA/0000001_1.md\tSymptoms and Signs\n"
        "q2\tguide.pdf\tp3\n"
        "q3\ttalk.vtt\t00:01:00-00:02:30\n"
        "q3\ttalk.vtt\t00:01:00-00:02:30\n"
    )
    golds = load_sections(path)
    assert golds["q1"] == [
        SectionGold(
            "1_CancerGov_QA/0000001_1.md", "Symptoms and Signs", heading="Symptoms and Signs"
        )
    ]
    assert golds["q2"][0].page == 3
    assert (golds["q3"][0].start, golds["q3"][0].end) == (60.0, 150.0)
    assert len(golds["q3"]) == 1  # duplicates collapse
    assert section_qrels(golds)["q2"] == {"guide.pdf::p3": 1}
    path.write_text("q1\tfile.md\n")
    with pytest.raises(EvalDataError, match=r"sections\.tsv:1: expected 3 tab-separated"):
        load_sections(path)
    path.write_text("q1\tfile.md\tOverview\nq2\ttalk.vtt\t00:02:00-00:01:00\n")
    with pytest.raises(EvalDataError, match=r"sections\.tsv:2: .*ends before it starts"):
        load_sections(path)


def test_gold_matching_heading_page_time_range() -> None:
    heading = parse_section("kb/a.md", "Treatment")
    assert matches(heading, _chunk("c", source="/data/kb/a.md", heading="Treatment"))
    assert matches(heading, _chunk("c", source="/data/kb/a.md", heading_path=["A", "treatment"]))
    assert not matches(heading, _chunk("c", source="/data/kb/a.md", heading="Causes"))
    assert not matches(heading, _chunk("c", source="/data/xkb/a.md", heading="Treatment"))
    page = parse_section("guide.pdf", "p3")
    assert matches(page, _chunk("c", source="docs/guide.pdf", page=3))
    assert not matches(page, _chunk("c", source="docs/guide.pdf", page=4))
    span = parse_section("talk.vtt", "00:01:00-00:02:00")
    assert matches(span, _chunk("c", source="talk.vtt", start=90.0, end=200.0))
    assert matches(span, _chunk("c", source="talk.vtt", start=10.0, end=61.0))
    assert not matches(span, _chunk("c", source="talk.vtt", start=120.0, end=180.0))  # touches
    assert not matches(span, _chunk("c", source="talk.vtt", page=1))


def test_corpus_units_collapse_chunks_keeping_first_rank() -> None:
    mapper = CorpusUnits()
    hits = _hits(
        _chunk("1", corpus_id="A"),
        _chunk("2", corpus_id="B"),
        _chunk("3", corpus_id="A"),
        _chunk("4", corpus_id="C"),
        _chunk("5", doc="zz"),
    )
    assert ranked_units(hits, mapper, depth=100) == ["A", "B", "C", "doc:zz"]
    assert ranked_units(hits, mapper, depth=2) == ["A", "B"]
    assert mapper.missing == 1


def test_section_units_give_unmatched_chunks_their_own_unit() -> None:
    gold = parse_section("kb/a.md", "Treatment")
    mapper = SectionUnits([gold])
    hits = _hits(
        _chunk("1", source="/x/kb/a.md", heading="Causes"),
        _chunk("2", source="/x/kb/a.md", heading="Causes"),
        _chunk("3", source="/x/kb/b.md", heading="Treatment"),
        _chunk("4", source="/x/kb/a.md", heading="Treatment"),
        _chunk("5", source="/x/kb/a.md", heading="Treatment"),
    )
    assert ranked_units(hits, mapper, 100) == [
        "/x/kb/a.md::Causes",
        "/x/kb/b.md::Treatment",
        "kb/a.md::Treatment",
    ]
