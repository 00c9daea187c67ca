from __future__ import annotations

import pytest

from ragchat.retrieve.sections import (
    boost_sections,
    label_aspects,
    question_aspects,
    section_label,
    topic_stems,
)
from ragchat.types import Chunk, Hit


def _chunk(cid: str, text: str, path: list[str] | None = None, title: str = "Hay fever") -> Chunk:
    md: dict[str, object] = {"doc_title": title, "title": title}
    if path is not None:
        md["heading_path"] = path
    return Chunk(cid, cid, text, 0, metadata=md)


@pytest.mark.parametrize(
    ("question", "aspect"),
    [
        ("What helps with hay fever?", "treatment"),
        ("How is type 2 diabetes treated?", "treatment"),
        ("What are the treatments for Acromegaly ?", "treatment"),
        ("What are the symptoms of migraine?", "symptoms"),
        ("How is it diagnosed?", "diagnosis"),
        ("What causes gout?", "causes"),
        ("How can I prevent a cold?", "prevention"),
        ("What is (are) Eating Disorders ?", "definition"),
        ("What are the side effects of ibuprofen?", "side_effects"),
        ("What is ibuprofen used for?", "uses"),
        ("What should I do during a toddler tantrum?", "action"),
        ("Can I take it with warfarin?", "interactions"),
        ("Does ibuprofen interact with lithium?", "interactions"),
        ("Tell me about ibuprofen", "definition"),
        ("Can you explain what a migraine is", "definition"),
    ],
)
def test_question_aspects(question: str, aspect: str) -> None:
    assert aspect in question_aspects(question)


def test_a_plain_question_names_no_aspect() -> None:
    assert question_aspects("Who won the 2014 football World Cup?") == frozenset()
    assert "definition" not in question_aspects("What are the symptoms of gout?")


def test_label_aspects_of_headings_and_leading_questions() -> None:
    assert "treatment" in label_aspects("Type 2 diabetes > Management > Medicines")
    assert "treatment" in label_aspects("What are the treatments for Acromegaly ?")
    assert "definition" in label_aspects("What it is")
    assert label_aspects("Children") == frozenset()
    assert label_aspects("") == frozenset()


def test_section_label_is_the_heading_path_below_the_title_or_the_opening_question() -> None:
    md = _chunk("a", "## Treatment\nAntihistamines help.", ["Hay fever", "Treatment"])
    assert section_label(md) == "Treatment"
    flat = _chunk("b", "Hay fever\nWhat are the treatments for hay fever? Antihistamines help.")
    assert section_label(flat) == "What are the treatments for hay fever?"
    assert section_label(_chunk("c", "Antihistamines help.")) == ""


def test_boost_lifts_the_matching_section_to_the_head_of_its_document() -> None:
    cold = "Common cold"
    hits = [
        Hit(_chunk("kids", "Children can have hay fever too.", ["Hay fever", "Children"]), 0.9),
        Hit(_chunk("what", "Hay fever is an allergy.", ["Hay fever", "What it is"]), 0.8),
        Hit(_chunk("cold", "Rest helps.", [cold, "Treatment"], title=cold), 0.6),
        Hit(_chunk("treat", "Antihistamines help.", ["Hay fever", "Treatment"]), 0.4),
        Hit(_chunk("x", "Pollen peaks in spring.", ["Hay fever", "Seasons"]), 0.2),
    ]
    out = boost_sections("What helps with hay fever?", hits, 0.05)
    assert [h.chunk.chunk_id for h in out] == ["treat", "kids", "what", "cold", "x"]
    assert out[0].score == pytest.approx(0.9 + 0.05 * 0.7)
    assert out[0].scores["section"] == pytest.approx(0.9 + 0.05 * 0.7 - 0.4)
    # another document's matching section is not lifted: the question is about hay fever
    assert out[3].score == pytest.approx(0.6)
    assert "section" not in out[3].scores
    # no aspect, or weight 0: the order is kept
    assert boost_sections("When does pollen peak?", hits, 0.05) == hits
    assert boost_sections("What helps with hay fever?", hits, 0.0) == hits


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("How is a migraine treated?", {"migrain"}),
        ("What is ibuprofen used for?", {"ibuprofen"}),
        ("Tell me about ibuprofen", {"ibuprofen"}),
        ("What should I do during a toddler tantrum?", {"toddler", "tantrum"}),
        ("How is it treated?", set()),
    ],
)
def test_topic_stems_leave_out_the_aspect_words(question: str, topic: set[str]) -> None:
    assert topic_stems(question) == topic


def test_only_the_documents_about_the_topic_get_the_lift() -> None:
    """BM25 finds a diabetes Management section through "treated"; it must not be lifted for
    a question about migraine, while the migraine page's Treatment section is."""
    diabetes, migraine = "Type 2 diabetes", "Migraine"
    hits = [
        Hit(
            _chunk("dm", "Diabetes is treated with diet.", [diabetes, "Management"], diabetes), 0.9
        ),
        Hit(_chunk("mw", "Migraine is a headache.", [migraine, "What it is"], migraine), 0.8),
        Hit(_chunk("mt", "Rest in a dark room.", [migraine, "Treatment"], migraine), 0.5),
    ]
    out = {h.chunk.chunk_id: h for h in boost_sections("How is a migraine treated?", hits, 0.05)}
    assert out["dm"].score == pytest.approx(0.9)
    assert "section" not in out["dm"].scores
    assert out["mt"].score == pytest.approx(0.8 + 0.05 * 0.4)
    # with no topic word left every document's matching section is lifted, as before
    out = {h.chunk.chunk_id: h for h in boost_sections("How is it treated?", hits, 0.05)}
    assert out["dm"].score == pytest.approx(0.9 + 0.05 * 0.4)


def test_a_dose_question_names_its_medicine_not_maximum_as_the_topic() -> None:
    # "maximum" is how much of the dose is asked, not what about: the acetaminophen page's
    # "Maximum daily dose" must not make it the topic of a question about ibuprofen.
    question = "What is the maximum dose of ibuprofen?"
    assert question_aspects(question) == {"dose"}
    assert topic_stems(question) == {"ibuprofen"}
    assert topic_stems("What is the maximum daily dose of ibuprofen?") == {"ibuprofen"}
    assert "dose" in label_aspects("Usual adult dosing (general guidance)")
    assert "dose" in label_aspects("3. How to take amoxicillin")
