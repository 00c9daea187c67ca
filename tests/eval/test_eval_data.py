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
    load_question_sections,
    load_sections,
    matches,
    parse_section,
    ranked_units,
    read_sections,
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


QUESTIONS_TSV = (
    "question\tfile\tsection\n"
    "What are the symptoms of gout?\tgout.md\tSymptoms\n"
    "# a comment line\n"
    "How is gout treated?\tgout.md\tTreatment\n"
    "what are the  symptoms of gout?\tguide.pdf\tp3\n"
    "What are the symptoms of gout?\tgout.md\tSymptoms\n"
)


def test_question_sections_group_rows_by_question(tmp_path: Path) -> None:
    path = tmp_path / "gold.tsv"
    path.write_text(QUESTIONS_TSV)
    queries, golds = load_question_sections(path)
    assert [(q.qid, q.text) for q in queries] == [
        ("q1", "What are the symptoms of gout?"),
        ("q2", "How is gout treated?"),
    ]
    # Same question up to case and spacing: one query, its sections in file order, no repeats.
    assert [g.unit_id for g in golds["q1"]] == ["gout.md::Symptoms", "guide.pdf::p3"]
    assert golds["q1"][1].page == 3
    assert section_qrels(golds)["q2"] == {"gout.md::Treatment": 1}
    assert read_sections(path, queries_given=False) == (golds, queries)


def test_read_sections_tells_the_form(tmp_path: Path) -> None:
    ids = tmp_path / "ids.tsv"
    ids.write_text("query-id\tfile\tsection\n7\ta.md\tCauses\n")
    causes = parse_section("a.md", "Causes")
    assert read_sections(ids, queries_given=True) == ({"7": [causes]}, None)
    no_header = tmp_path / "plain.tsv"
    no_header.write_text("Why does it hurt?\ta.md\tCauses\n")
    golds, queries = read_sections(no_header, queries_given=False)
    assert queries is not None and queries[0].text == "Why does it hurt?"
    assert golds == {"q1": [causes]}
    # The same header-less file with a queries file: its first column is a query id.
    assert read_sections(no_header, queries_given=True)[0] == {"Why does it hurt?": [causes]}


@pytest.mark.parametrize(
    ("text", "queries_given", "message"),
    [
        ("question\tfile\tsection\nWhy?\ta.md\n", False, r"gold\.tsv:2: expected 3 tab-sep"
         r"arated fields \(question, file, section\), got 2 non-empty$"),
        ("Why does it hurt?  a.md  Causes\n", False, r"gold\.tsv:1: .*got 1 non-empty \(no tab"),
        ("question\tfile\tsection\nWhy?\tt.vtt\t00:02:00-00:01:00\n", False,
         r"gold\.tsv:2: time range .* ends before it starts"),
        ("query-id\tfile\tsection\n1\ta.md\tCauses\n", False,
         r"gold\.tsv: names query ids .*give the queries file \(--queries\)"),
        ("1\ta.md\tCauses\n2\ta.md\tTreatment\n", False, r"gold\.tsv: .*looks like query ids"),
        ("question\tfile\tsection\nWhy?\ta.md\tCauses\n", True,
         r"gold\.tsv: holds the questions .*give no queries file"),
    ],
    ids=["missing-field", "no-tabs", "bad-range", "ids-without-queries", "looks-like-ids",
         "questions-and-queries"],
)  # fmt: skip
def test_read_sections_errors_name_file_and_line(
    tmp_path: Path, text: str, queries_given: bool, message: str
) -> None:
    path = tmp_path / "gold.tsv"
    path.write_text(text)
    with pytest.raises(EvalDataError, match=message):
        read_sections(path, queries_given=queries_given)


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
