"""``ragchat eval documents``: the loaders, the key-fact and right-place judges, the summary, and
one end-to-end run (real MiniLM embedder, offline conversational agent) on two small files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragchat.eval.cli as eval_cli
from ragchat.eval.data import EvalDataError
from ragchat.eval.documents import (
    Place,
    Reply,
    cites_place,
    facts_found,
    has_variant,
    load_doc_conversations,
    load_questions,
    summarise_replies,
)
from ragchat.types import Citation


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _citation(**kw: object) -> Citation:
    base: dict[str, object] = dict(
        index=1, chunk_id="c", source="/up/handbook.md", title="", location="", score=1.0,
        preview="",
    )  # fmt: skip
    return Citation(**(base | kw))  # type: ignore[arg-type]


def test_variants_match_whole_numbers_and_words_after_normalising() -> None:
    assert has_variant("The cap is **£180** a night [1].", "180")
    assert not has_variant("It costs 1800 pounds.", "180")
    assert not has_variant("Dose: 250 mg.", "25")
    assert not has_variant("Budget £1,000.", "1")
    assert has_variant("Treatment lasts 5 to 10 days.", "5 to 10 days")
    assert has_variant("It’s a 2‑year warranty", "2-year")
    assert has_variant("Call before 10:00.", "10:00")
    assert not has_variant("Gloria", "glory")
    assert facts_found("Core hours are 10:00 to 16:00.", [["10:00"], ["16:00"], ["17:00"]]) == 2


def test_right_place_by_heading_page_and_time_range() -> None:
    gold = Place("handbook.md", heading=("H", "Travel", "Hotels"))
    assert cites_place(_citation(section_path=("H", "Travel", "Hotels")), gold)
    assert cites_place(_citation(section_path=("H", "Travel", "Hotels", "London")), gold)
    assert cites_place(_citation(section_path=("H", "Travel")), gold)  # its parent section
    assert not cites_place(_citation(section_path=("H",)), gold)  # the whole document
    assert not cites_place(_citation(section_path=("H", "Travel", "Meals")), gold)
    assert not cites_place(_citation(source="/up/other.md", section_path=gold.heading), gold)
    page = Place("manual.pdf", page=4)
    assert cites_place(_citation(source="manual.pdf", page=4), page)
    assert not cites_place(_citation(source="manual.pdf", page=3), page)
    span = Place("m.vtt", start=120.0, end=140.0)
    inside = _citation(source="m.vtt", start_ts="00:02:10.000", end_ts="00:02:50.000")
    before = _citation(source="m.vtt", start_ts="00:01:00.000", end_ts="00:01:59.000")
    assert cites_place(inside, span) and not cites_place(before, span)
    assert cites_place(_citation(source="notes.txt"), Place("notes.txt"))


def test_loaders_read_questions_and_conversations(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", [
        {"id": "a", "question": "Hotel cap in London?", "facts": [["180"], "GBP"],
         "where": "table", "place": {"file": "h.md", "heading": ["H", "Hotels"]}},
        {"id": "u", "question": "Pension?", "answerable": False, "near": "h.md"},
        {"question": "When?", "facts": [["ten"]],
         "place": {"file": "m.vtt", "start": "00:01:00.000", "end": "00:01:05.500"}},
    ])  # fmt: skip
    a, u, third = load_questions(path)
    assert a.gold is not None and a.gold.facts == (("180",), ("GBP",)) and a.gold.where == "table"
    assert u.gold is None and u.near == "h.md"
    assert third.qid == "3" and third.gold is not None and third.gold.where == "prose"
    assert third.gold.place == Place("m.vtt", start=60.0, end=65.5)
    conv = _jsonl(tmp_path / "c.jsonl", [
        {"id": "c1", "turns": [{"message": "Hi"}, {"message": "And?", "facts": [["x"]]}]},
    ])  # fmt: skip
    (c1,) = load_doc_conversations(conv)
    assert c1.turns[0][1] is None and c1.turns[1][1] is not None


@pytest.mark.parametrize(
    "bad",
    ["not json", '{"question": ""}', '{"question": "q", "facts": []}', '{"question": "q"}'],
)
def test_loader_names_the_bad_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "ok", "answerable": false}\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match=r"q\.jsonl:2"):
        load_questions(path)


def _reply(kind: str, *, where: str = "prose", refused: bool = False, facts: int = 1,
           found: int = 1, place: bool | None = True) -> Reply:  # fmt: skip
    return Reply("q", "?", kind, where, "", refused, facts, found, place, 10.0)


def test_summary_rates() -> None:
    rows = [
        _reply("answerable", where="table"),
        _reply("answerable", where="table", found=0, place=False),
        _reply("answerable", refused=True, found=0, place=False),
        _reply("unanswerable", refused=True, facts=0, found=0, place=None),
        _reply("unanswerable", facts=0, found=0, place=None),
        _reply("first turn"),
        _reply("follow-up", found=0),
    ]
    s = summarise_replies(rows)
    assert s["answerable"]["n"] == 3
    assert s["answerable"]["key_facts"] == pytest.approx(1 / 3)
    assert s["answerable"]["right_place"] == pytest.approx(1 / 3)
    assert s["answerable"]["wrong_refusal"] == pytest.approx(1 / 3)
    assert s["unanswerable"]["refused"] == 0.5
    assert s["follow_up_key_facts"] == 0.0
    assert s["by_where"]["table"]["key_facts"] == 0.5


DOC = """# Garden handbook

## Watering

Water the beds early in the morning. Each plot holder may use the hose for 20 minutes a day.

## Fees

The plot fee is 35 pounds a year, paid every April to the treasurer.
"""


def test_eval_documents_end_to_end(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "garden.md").write_text(DOC, encoding="utf-8")
    place = {"file": "garden.md", "heading": ["Garden handbook", "Fees"]}
    questions = _jsonl(tmp_path / "q.jsonl", [
        {"id": "fee", "question": "How much is the plot fee?", "facts": [["35"]],
         "where": "prose", "place": place},
        {"id": "u1", "question": "What is the capital of Australia?", "answerable": False},
    ])  # fmt: skip
    convs = _jsonl(tmp_path / "c.jsonl", [
        {"id": "c1", "turns": [
            {"message": "How long can I use the hose?", "facts": [["20 minutes"]]},
            {"message": "When is the fee paid?", "facts": [["april"]], "place": place},
        ]},
    ])  # fmt: skip
    out = tmp_path / "out"
    result = CliRunner().invoke(eval_cli.eval_app, [
        "documents", str(docs), "--questions", str(questions), "--conversations", str(convs),
        "--output", str(out), "--data-dir", str(tmp_path / "d"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "key facts" in result.output and "follow-up" in result.output
    rows = {r["qid"]: r for r in csv.DictReader((out / "replies.csv").open(encoding="utf-8"))}
    assert set(rows) == {"fee", "u1", "c1#1", "c1#2"}
    assert rows["fee"]["found"] == "1" and rows["fee"]["right_place"] == "True"
    assert "35" in rows["fee"]["reply"] and "garden.md" in rows["fee"]["locations"]
    assert rows["u1"]["refused"] == "True"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["summary"]["answerable"]["key_facts"] == 1.0
    # A second run starts from a fresh knowledge base, not an added copy.
    again = CliRunner().invoke(eval_cli.eval_app, [
        "documents", str(docs), "--questions", str(questions), "--output", str(out),
        "--data-dir", str(tmp_path / "d"),
    ])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "1 files, " in again.output
