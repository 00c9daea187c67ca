"""``ragchat eval answers``: metric functions on hand-made examples, the PubMedQA loader, and
one end-to-end run (real MiniLM embedder, offline extractive answerer) on a 3-question file."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragchat.eval.cli as eval_cli
from ragchat import resources
from ragchat.embed.base import Embedder
from ragchat.eval.answers import (
    AnswerRecord,
    citation_problems,
    evidence_hit,
    gold_cited,
    groundedness,
    load_answer_jsonl,
    load_pubmedqa,
    reply_sentences,
    rouge_l,
    summarise,
)
from ragchat.eval.data import EvalDataError
from ragchat.settings import Settings
from ragchat.types import Chunk, Citation

TINY = {
    "101": {
        "QUESTION": "Does vitamin D supplementation reduce fractures in elderly women?",
        "CONTEXTS": [
            "Vitamin D supplementation was given to 400 elderly women in a randomized trial.",
            "Fractures were reduced by 30 percent in elderly women who received vitamin D.",
        ],
        "LONG_ANSWER": "Vitamin D supplementation reduced fractures in elderly women.",
        "final_decision": "yes",
    },
    "202": {
        "QUESTION": "Is coffee consumption associated with atrial fibrillation?",
        "CONTEXTS": [
            "We followed 5000 adults to study coffee consumption and heart rhythm.",
            "Coffee consumption was not associated with a higher risk of atrial fibrillation.",
        ],
        "LONG_ANSWER": "Coffee drinking was not linked to atrial fibrillation.",
        "final_decision": "no",
    },
    "303": {
        "QUESTION": "Does early mobilisation shorten hospital stay after hip surgery?",
        "CONTEXTS": [
            "Patients after hip surgery were mobilised on the first day or the third day.",
            "Early mobilisation shortened hospital stay by two days after hip surgery.",
        ],
        "LONG_ANSWER": "Early mobilisation after hip surgery shortens the hospital stay.",
        "final_decision": "yes",
    },
}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return resources.embedder(Settings(data_dir=tmp_path_factory.mktemp("emb")))


def _citation(index: int, chunk_id: str) -> Citation:
    return Citation(index, chunk_id, "s", "t", "", 1.0, "")


def test_rouge_l_uses_stemming_and_ignores_markers() -> None:
    assert rouge_l("The cat sat on the mat [1].", "the cat sat on the mat") == pytest.approx(1.0)
    stemmed = rouge_l("dogs running fast", "dog runs fast")
    assert stemmed == pytest.approx(1.0)  # Porter stems: dogs→dog, running/runs→run
    assert rouge_l("completely unrelated words", "the cat sat") == 0.0
    assert 0.0 < rouge_l("the cat sat on a chair", "the cat sat on the mat") < 1.0


def test_citation_validity_catches_made_up_ids_and_dangling_markers() -> None:
    cites = [_citation(1, "a"), _citation(2, "b")]
    known, retrieved = {"a", "b"}, ["a", "b", "c"]
    assert citation_problems("Fact [1]. Other [2].", cites, retrieved, known) == []
    dangling = citation_problems("Fact [1]. Other [3].", cites, retrieved, known)
    assert dangling == ["[3] has no citation"]
    made_up = citation_problems("Fact [1].", [_citation(1, "zzz")], retrieved, known)
    assert made_up == ["[1] zzz is not in the knowledge base"]
    unretrieved = citation_problems("Fact [1].", [_citation(1, "d")], retrieved, known | {"d"})
    assert unretrieved == ["[1] d was not retrieved"]


def test_groundedness_counts_supported_sentences(embedder: Embedder) -> None:
    passages = ["Ibuprofen can irritate the stomach. Take it with food to reduce heartburn."]
    quoted = reply_sentences("Ibuprofen can irritate the stomach [1].")
    assert quoted == ["Ibuprofen can irritate the stomach."]
    assert groundedness(quoted, passages, embedder) == 1.0
    mixed = reply_sentences(
        "Take it with food to reduce heartburn [1]. The Eiffel Tower is in Paris, France."
    )
    assert groundedness(mixed, passages, embedder) == pytest.approx(0.5)
    assert groundedness([], passages, embedder) is None


def test_evidence_hit_needs_every_citation_from_the_own_abstract() -> None:
    assert evidence_hit(["101-0", "101-1"], "101")
    assert not evidence_hit(["101-0", "202-1"], "101")
    assert not evidence_hit([], "101")
    assert not evidence_hit(["1010-0"], "101")  # the dash keeps 1010 apart from 101


def test_gold_cited_matches_the_corpus_id_or_the_file_name(tmp_path: Path) -> None:
    record = Chunk("c1", "d", "t", 0, metadata={"corpus_id": "2:0001-3", "source": "x#2:0001-3"})
    page = Chunk("c2", "d2", "t", 0, metadata={"source": "/kb/medical/ibuprofen.md"})
    assert gold_cited([page, record], "2:0001-3")
    assert not gold_cited([record], "2:0001-30")
    assert gold_cited([page], "ibuprofen.md") and not gold_cited([page], "profen.md")
    assert not gold_cited([], "2:0001-3")
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "q7", "question": "Q?", "answer": "A.", "gold_doc": "2:0001-3"}\n')
    (item,) = load_answer_jsonl(path)
    assert (item.qid, item.gold_doc) == ("q7", "2:0001-3")


def test_summary_reports_gold_cited_only_when_the_data_has_golds() -> None:
    def record(gold: bool | None) -> AnswerRecord:
        return AnswerRecord("q", "", "", "", "a", False, 1, [], True, [], 0.5, 0.5, None,
                            None, 10.0, gold_cited=gold)  # fmt: skip

    assert "gold_cited_rate" not in summarise([record(None)])
    s = summarise([record(True), record(False), record(True), record(True)])
    assert s["gold_cited_rate"] == pytest.approx(0.75)


def test_summary_scores_no_answer_separately() -> None:
    def record(no_answer: bool, rouge: float | None, valid: bool) -> AnswerRecord:
        return AnswerRecord("q", "", "", "", "a", no_answer, 0 if no_answer else 1, [],
                            valid, [], rouge, rouge, None, not no_answer, 10.0)  # fmt: skip

    s = summarise([record(False, 0.5, True), record(False, 0.3, False), record(True, None, True)])
    assert s["no_answer_rate"] == pytest.approx(1 / 3)
    assert s["rougeL_f1"] == pytest.approx(0.4) and s["rougeL_f1_all"] == pytest.approx(0.8 / 3)
    assert s["citations_valid_rate"] == pytest.approx(0.5) and s["cited_rate"] == 1.0
    assert s["evidence_hit_rate"] == pytest.approx(2 / 3)


def test_pubmedqa_loader(tmp_path: Path) -> None:
    path = tmp_path / "pqal.json"
    path.write_text(json.dumps(TINY))
    items, corpus = load_pubmedqa(path)
    assert [i.qid for i in items] == ["101", "202", "303"]
    assert items[1].pmid == "202" and items[1].reference.startswith("Coffee drinking")
    assert [r["_id"] for r in corpus[:3]] == ["101-0", "101-1", "202-0"]
    assert corpus[3] == {"_id": "202-1", "title": "", "text": TINY["202"]["CONTEXTS"][1]}
    (tmp_path / "bad.json").write_text('{"1": {"QUESTION": "q"}}')
    with pytest.raises(EvalDataError, match="lacks"):
        load_pubmedqa(tmp_path / "bad.json")


def test_jsonl_loader(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text('{"question": "What?", "answer": "That.", "kb": "x"}\n\n{"question": "Q"}\n')
    with pytest.raises(EvalDataError, match=":3:"):
        load_answer_jsonl(path)
    path.write_text('{"question": "What?", "answer": "That.", "kb": "x"}\n')
    assert load_answer_jsonl(path)[0].kb == "x"


def test_eval_answers_end_to_end(tmp_path: Path) -> None:
    data = tmp_path / "pqal.json"
    data.write_text(json.dumps(TINY))
    out = tmp_path / "out"
    result = CliRunner().invoke(eval_cli.eval_app, [
        "answers", "--data", str(data), "--output", str(out), "--data-dir", str(tmp_path / "d"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "evidence hit" in result.output
    rows = list(csv.DictReader((out / "answers.csv").open(encoding="utf-8")))
    assert [r["qid"] for r in rows] == ["101", "202", "303"]
    summary = json.loads((out / "summary.json").read_text())
    s = summary["summary"]
    assert summary["kb"] == "pubmedqa" and summary["questions"] == 3
    assert s["answered"] >= 2  # the offline answerer quotes the matching abstract
    assert s["citations_valid_rate"] == 1.0 and s["cited_rate"] == 1.0
    assert s["evidence_hit_rate"] >= 2 / 3
    assert s["rougeL_f1"] > 0.2 and s["similarity"] > 0.5
    answered = [r for r in rows if r["no_answer"] == "False"]
    assert all(r["cited_ids"] and r["citations_valid"] == "True" for r in answered)
    assert (tmp_path / "d" / "eval" / "pubmedqa-corpus.jsonl").read_text().count("\n") == 6
    # A second run reuses the knowledge base: the unchanged corpus is not ingested again.
    again = CliRunner().invoke(eval_cli.eval_app, [
        "answers", "--data", str(data), "--limit", "1", "--output", str(out),
        "--data-dir", str(tmp_path / "d"),
    ])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "0 files ingested now" in again.output
    assert json.loads((out / "summary.json").read_text())["questions"] == 1
