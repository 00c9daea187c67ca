"""``ragchat eval conversations``: the loader, the topic bound, and one end-to-end run (real
MiniLM embedder, offline conversational agent) on two three-turn conversations."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragchat.eval.cli as eval_cli
from ragchat import resources
from ragchat.eval.answers_io import ensure_corpus_kb
from ragchat.eval.conversations import load_conversations, with_topic
from ragchat.eval.data import EvalDataError
from ragchat.settings import Settings

CORPUS = [
    ("ibu-use", "Ibuprofen", "Ibuprofen is an anti-inflammatory drug for pain and fever."),
    (
        "ibu-dose",
        "Ibuprofen",
        "Ibuprofen dose for adults: an adult takes 200 to 400 mg of ibuprofen every four to "
        "six hours, at most 1,200 mg a day without a doctor's advice.",
    ),
    (
        "ibu-warf",
        "Ibuprofen",
        "Ibuprofen with warfarin: taking ibuprofen together with warfarin raises the risk of "
        "bleeding, so ask a doctor first.",
    ),
    (
        "warf-dose",
        "Warfarin",
        "Warfarin dose for adults: an adult usually takes 2 to 5 mg of warfarin a day, adjusted "
        "to the INR blood test.",
    ),
    ("warf-use", "Warfarin", "Warfarin is an anticoagulant that prevents blood clots."),
    (
        "kbg-freq",
        "KBG syndrome",
        "KBG syndrome frequency: KBG syndrome is rare; about 200 people have been reported.",
    ),
    (
        "kbg-inh",
        "KBG syndrome",
        "KBG syndrome inheritance: KBG syndrome is inherited in an autosomal dominant pattern.",
    ),
    ("asthma", "Asthma", "Asthma treatment: inhaled corticosteroids control asthma."),
]

CONVERSATIONS = [
    {
        "id": "ibu",
        "topic": "ibuprofen",
        "turns": [
            {"message": "Tell me about ibuprofen."},
            {"message": "Can I take it with warfarin?", "gold_doc": "ibu-warf"},
            {"message": "How much should an adult take?", "gold_doc": "ibu-dose"},
        ],
    },
    {
        "id": "kbg",
        "topic": "KBG syndrome",
        "turns": [
            {"message": "I'd like to learn about KBG syndrome."},
            {"message": "How common is it?", "gold_doc": "kbg-freq"},
            {"message": "Is it inherited?", "gold_doc": "kbg-inh", "answer": "It is dominant."},
        ],
    },
]


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_loader_reads_turns_golds_and_topic(tmp_path: Path) -> None:
    section = {"file": "kb/a.md", "section": "Treatment"}
    path = _jsonl(
        tmp_path / "c.jsonl",
        [
            CONVERSATIONS[0],
            {"turns": [{"message": "How is it treated?", "gold_section": section}]},
        ],
    )
    first, second = load_conversations(path)
    assert first.cid == "ibu" and first.topic == "ibuprofen" and len(first.turns) == 3
    assert not first.turns[0].judged and first.turns[2].gold_doc == "ibu-dose"
    assert second.cid == "2" and second.topic is None
    gold = second.turns[0].gold_section
    assert gold is not None and gold.heading == "Treatment" and second.turns[0].judged


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        '{"turns": []}',
        '{"turns": [{"message": ""}]}',
        '{"turns": [{"message": "x", "gold_section": "a.md"}]}',
    ],
)
def test_loader_names_the_bad_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"turns": [{"message": "ok"}]}\n' + bad + "\n", encoding="utf-8")
    with pytest.raises(EvalDataError, match=r"c\.jsonl:2"):
        load_conversations(path)


def test_with_topic_writes_the_topic_in() -> None:
    assert with_topic("How is it treated?", "asthma") == "How is asthma treated?"
    assert with_topic("What are its symptoms?", "KBG syndrome") == "What are KBG syndrome symptoms?"
    assert with_topic("How common?", "asthma") == "How common? (asthma)"
    assert with_topic("Is asthma inherited?", "asthma") == "Is asthma inherited?"


def test_eval_conversations_end_to_end(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    settings = Settings(data_dir=data_dir)
    records = [{"_id": i, "title": t, "text": x} for i, t, x in CORPUS]
    ensure_corpus_kb(settings, resources.embedder(settings), records, "tiny")
    data = _jsonl(tmp_path / "conv.jsonl", list(CONVERSATIONS))
    out = tmp_path / "out"
    result = CliRunner().invoke(eval_cli.eval_app, [
        "conversations", "--data", str(data), "--kb", "tiny", "--output", str(out),
        "--data-dir", str(data_dir),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "follow-up" in result.output and "turns.csv" in result.output
    rows = {(r["cid"], r["turn"]): r for r in csv.DictReader((out / "turns.csv").open())}
    assert len(rows) == 6
    # The follow-up after the warfarin question is still about ibuprofen.
    dose = rows[("ibu", "3")]
    assert "ibuprofen" in dose["agent_query"] and "warfarin" not in dose["agent_query"]
    # Searched with the earlier messages beside it (the warfarin one among them), the
    # ibuprofen dose passage is found but not first.
    assert float(dose["agent_mrr@10"]) > 0.0
    assert dose["topic_query"] == "How much should an adult take? (ibuprofen)"
    assert rows[("kbg", "3")]["agent_query"] == "Is KBG syndrome inherited?"
    assert rows[("ibu", "1")]["agent_ndcg@10"] == ""  # no gold: not judged
    summary = json.loads((out / "summary.json").read_text())
    s = summary["summary"]
    assert summary["conversations"] == 2 and summary["agent"] == "answerer"
    assert s["first"]["judged"] == 0 and s["follow-up"]["judged"] == 4
    follow = s["follow-up"]["retrieval"]
    assert follow["agent"]["nDCG@10"] > follow["raw"]["nDCG@10"]
    assert follow["agent"]["nDCG@10"] >= 0.95 * follow["topic"]["nDCG@10"]
    assert s["follow-up"]["answers"]["questions"] == 4
    assert s["all"]["answers"]["rougeL_f1"] is not None  # the one turn with a reference
    as_json = CliRunner().invoke(eval_cli.eval_app, [
        "conversations", "--data", str(data), "--kb", "tiny", "--limit", "1", "--json",
        "--output", str(out), "--data-dir", str(data_dir),
    ])  # fmt: skip
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["conversations"] == 1
