from __future__ import annotations

import re

import pytest

from ragchat.agents.heuristics.compose import DEFAULT_NO_ANSWER, ComposedAnswer, compose_answer
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.reader.text import segment, split_sentences

from .conftest import make_hit

DOSING = """## Usual adult dosing (general guidance)

Read the label on your product each time, because tablet strengths differ (for example 325 mg, 500 mg or 650 mg).

- Adults commonly take 500 to 1,000 mg per dose, with at least 4 to 6 hours between doses.
- **Maximum daily dose:** do not take more than the total daily amount stated on the label. For healthy adults this is often no more than 3,000 to 4,000 mg in 24 hours, and some labels set a lower limit.
- People who drink alcohol regularly, have liver disease, weigh little or are older may need a lower maximum. Ask a clinician."""  # noqa: E501

LIVER = """## Liver warning

Taking more acetaminophen than recommended can cause serious liver damage, which can be life-threatening. The risk is higher if you:

- take more than the maximum daily dose
- take it with other products that contain acetaminophen
- drink three or more alcoholic drinks a day while using it"""  # noqa: E501

SIDE_EFFECTS = """## Side effects

At recommended doses, side effects are uncommon. Rarely, people develop a skin rash. Serious skin reactions are very rare; stop taking it and seek help if you notice redness, blistering or peeling skin."""  # noqa: E501

TRANSCRIPT = """Maya Chen: Let's move on to naps. When do toddlers usually drop from two naps to one?
Dr. Samuel Okafor: Most children make that switch somewhere between about twelve and eighteen months, although some are a little earlier or later. Signs include taking a long time to fall asleep for one of the naps, skipping the afternoon nap, or the second nap pushing bedtime very late.
Maya Chen: And when do they stop napping altogether?
Dr. Samuel Okafor: Usually between three and five years old."""  # noqa: E501

TITLE = "Acetaminophen (paracetamol)"
QUESTION = "What is the maximum daily dose of acetaminophen for an adult?"
NOTE = "This is general information, not medical advice."


def _hits() -> list:
    return [
        make_hit("acet-s5", SIDE_EFFECTS, title=TITLE, doc_id="acet", position=5, score=0.55),
        make_hit("acet-s3", DOSING, title=TITLE, doc_id="acet", position=3, score=0.52),
        make_hit("acet-s4", LIVER, title=TITLE, doc_id="acet", position=4, score=0.50),
    ]


def _markers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\[(\d+)\]", text)]


@pytest.fixture(scope="module")
def answer(real_embedder: Embedder) -> ComposedAnswer:
    """The dosing question answered once with the real embedder (shared by several tests)."""
    return compose_answer(QUESTION, _hits(), real_embedder, disclaimer=NOTE)


def test_cites_the_answering_sentence(answer: ComposedAnswer) -> None:
    ans = answer
    assert not ans.no_answer
    assert "3,000 to 4,000 mg" in ans.text
    answering = next(n for s, n in ans.sentences if "3,000 to 4,000 mg" in s)
    assert ans.citations[answering - 1].chunk_id == "acet-s3"
    # Markdown is gone: no headings, bullets or bold markers.
    assert "#" not in ans.text and "**" not in ans.text and "\n-" not in ans.text
    assert "Side effects" not in ans.text


def test_citation_numbers_follow_first_use(answer: ComposedAnswer) -> None:
    ans = answer
    used = _markers(ans.text)
    firsts = list(dict.fromkeys(used))
    assert firsts == list(range(1, len(firsts) + 1))
    assert [c.index for c in ans.citations] == firsts
    # The best passage is retrieval rank 2 but leads, so it is [1].
    assert ans.citations[0].chunk_id == "acet-s3"
    assert [n for _, n in ans.sentences] == used
    assert {c.title for c in ans.citations} == {TITLE}


def test_leads_with_best_sentence_and_keeps_document_order(answer: ComposedAnswer) -> None:
    ans = answer
    texts = [s for s, _ in ans.sentences]
    assert texts[0].startswith("Maximum daily dose") or "3,000" in texts[0]
    # A lead without the number asked for is completed by the next sentence that has it.
    assert "3,000" in texts[0] or "3,000" in texts[1]
    rest = texts[1:] if "3,000" in texts[0] else texts[2:]
    full = DOSING + LIVER + SIDE_EFFECTS
    same_doc = [t for t in rest if t.split(":")[0][:30] in full or t[:30] in full]
    positions = [full.find(t[:30]) for t in same_doc if full.find(t[:30]) >= 0]
    assert positions == sorted(positions)


def test_near_duplicates_are_dropped(real_embedder: Embedder) -> None:
    hits = [
        make_hit("a", DOSING, title=TITLE, doc_id="acet", score=0.7),
        make_hit("b", DOSING.replace("Adults commonly", "Adults usually"), doc_id="copy"),
    ]
    ans = compose_answer(QUESTION, hits, real_embedder, max_sentences=4)
    texts = [s for s, _ in ans.sentences]
    assert sum("3,000 to 4,000" in t for t in texts) == 1
    assert sum("500 to 1,000 mg per dose" in t for t in texts) <= 1
    assert [c.chunk_id for c in ans.citations] == ["a"]


def test_disclaimer_is_a_separate_last_paragraph(answer: ComposedAnswer) -> None:
    body, _, tail = answer.text.rpartition("\n\n")
    assert tail == NOTE and "[1]" in body and NOTE not in body


def test_max_sentences_and_determinism(hashing: HashingEmbedder) -> None:
    # Not a quantity question: a meaningless embedder may lead with a sentence without a
    # number, which a dose question refuses (test_coverage.py).
    question = "What should an adult know about acetaminophen and the liver?"
    one = compose_answer(question, _hits(), hashing, max_sentences=1)
    assert len(one.sentences) == 1 and len(one.citations) == 1
    assert one == compose_answer(question, _hits(), hashing, max_sentences=1)
    four = compose_answer(question, _hits(), hashing, max_sentences=4, relative_floor=0.0)
    assert len(four.sentences) == 4


def test_transcript_answer_follows_the_hosts_question(real_embedder: Embedder) -> None:
    hits = [make_hit("talk-t3", TRANSCRIPT, title="Toddler sleep", start_ts="00:05:10.000")]
    ans = compose_answer("When do toddlers go from two naps to one?", hits, real_embedder)
    assert "twelve and eighteen months" in ans.sentences[0][0]
    assert not any(s.endswith("?") for s, _ in ans.sentences)
    assert ans.citations[0].start_ts == "00:05:10.000"


def test_unrelated_question_gives_no_answer_with_closest_topic(real_embedder: Embedder) -> None:
    ans = compose_answer("Who won the 2014 football World Cup?", _hits(), real_embedder)
    assert ans.no_answer and ans.citations == [] and ans.sentences == []
    assert ans.text.startswith(DEFAULT_NO_ANSWER)
    assert f"closest thing I found was about {TITLE}" in ans.text


def test_no_answer_paths(hashing: HashingEmbedder) -> None:
    empty = compose_answer("anything", [], hashing, no_answer_message="Sorry, not in my notes.")
    assert empty.no_answer and empty.text == "Sorry, not in my notes." and not empty.citations
    forced = compose_answer(QUESTION, _hits(), hashing, no_answer=True)
    assert forced.no_answer and not forced.citations and "closest" in forced.text
    headings_only = [make_hit("h", "# Title\n\n## Another heading")]
    assert compose_answer("title", headings_only, hashing).no_answer


def test_one_embedding_call_for_all_sentences(hashing: HashingEmbedder) -> None:
    compose_answer("maximum daily dose acetaminophen", _hits(), hashing)
    assert hashing.calls == 2  # the query, then every candidate sentence at once


def test_uses_hit_context_when_set(hashing: HashingEmbedder) -> None:
    child = make_hit("c", "Ask a clinician.", context=DOSING, title=TITLE)
    ans = compose_answer("maximum daily dose of acetaminophen in 24 hours", [child], hashing)
    assert not ans.no_answer and "24 hours" in ans.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# Title\n\n## Uses\n\nIt helps with pain. It lowers fever.",
            ["It helps with pain.", "It lowers fever."],
        ),
        ("Used for:\n\n- headache\n- fever", ["Used for: headache, fever."]),
        ("**Bold** text is *plain* now.", ["Bold text is plain now."]),
        (
            "Dr. Samuel Okafor: It varies. Ask your doctor.",
            ["Dr. Samuel Okafor: It varies.", "Ask your doctor."],
        ),
        (
            "A cabinet is often too warm\nand humid; a cupboard is better.",
            ["A cabinet is often too warm and humid; a cupboard is better."],
        ),
        ("of the sentence. A full sentence here. And a cut-off fragm", ["A full sentence here."]),
        (
            "The risk is higher if you:\n\n- take more than the maximum daily dose on the label\n"
            "- take it with other products that contain the same medicine",
            [
                "The risk is higher if you take more than the maximum daily dose on the label.",
                "The risk is higher if you take it with other products that contain the same "
                "medicine.",
            ],
        ),
        (
            "Care focuses on easing symptoms while the body fights the infection:\n\n"
            "- pain relievers such as acetaminophen or ibuprofen for aches and fever\n"
            "- warm drinks, honey and throat lozenges for a sore throat that lingers",
            [
                "Care focuses on easing symptoms while the body fights the infection: pain "
                "relievers such as acetaminophen or ibuprofen for aches and fever.",
                "Care focuses on easing symptoms while the body fights the infection: warm "
                "drinks, honey and throat lozenges for a sore throat that lingers.",
            ],
        ),
    ],
)
def test_sentence_splitting(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_segment_keeps_headings_as_context() -> None:
    text = "## Side effects\n\nMost people have no problems.\n\n### Rare\n\nRashes occur."
    pieces = segment(text)
    assert [(p.heading, p.text) for p in pieces] == [
        ("Side effects", "Most people have no problems."),
        ("Rare", "Rashes occur."),
    ]


def test_topic_missing_from_every_hit_is_no_answer_unless_the_caller_chose_the_text() -> None:
    emb = HashingEmbedder()
    hits = [
        make_hit(
            "leaflet",
            "Children's medicines are often liquids, and doses are usually based on weight.",
            title="Safe use of medicines",
        )
    ]
    question = "What dose of melatonin should I give my toddler?"
    refused = compose_answer(question, hits, emb)
    assert refused.no_answer and not refused.citations
    assert "Safe use of medicines" in refused.text
    chosen = compose_answer(question, hits, emb, require_topic=False, min_sentence_score=0.0)
    assert not chosen.no_answer and chosen.citations


def test_answer_keeps_to_the_hits_about_the_named_topic() -> None:
    emb = HashingEmbedder()
    hits = [
        make_hit(
            "a",
            "Acetaminophen side effects are uncommon at recommended doses.",
            title="Acetaminophen",
        ),
        make_hit(
            "b", "Ibuprofen side effects include indigestion and heartburn.", title="Ibuprofen"
        ),
    ]
    out = compose_answer("What are acetaminophen side effects?", hits, emb, min_sentence_score=0.0)
    assert [c.chunk_id for c in out.citations] == ["a"]
    assert "Ibuprofen" not in out.text


# -- section-aware answers and clean extracts ----------------------------------------------

HAY_FEVER = {
    "What it is": "Seasonal allergic rhinitis, often called hay fever, is an allergic reaction "
    "to pollen. Despite the name, hay fever does not cause a fever.",
    "Treatment": "Antihistamine tablets reduce sneezing, itching and a runny nose. Steroid "
    "nasal sprays reduce inflammation and are often the most effective treatment.",
    "Children": "Children can have hay fever too. Many antihistamines come in children's forms.",
}


def test_answers_from_the_section_the_question_asks_about(real_embedder: Embedder) -> None:
    hits = [
        make_hit(
            f"hf-{i}",
            f"## {heading}\n\n{body}",
            title="Seasonal allergies (hay fever)",
            doc_id="hf",
            position=i,
            heading_path=["Seasonal allergies (hay fever)", heading],
            heading=heading,
        )
        for i, (heading, body) in enumerate(HAY_FEVER.items())
    ]
    ans = compose_answer("What helps with hay fever?", hits, real_embedder)
    assert ans.citations[0].section_path[-1] == "Treatment"
    assert "Antihistamine" in ans.sentences[0][0]
    assert "does not cause a fever" not in ans.text
    assert "Children can have hay fever too" not in ans.text


def test_review_questions_are_never_quoted(hashing: HashingEmbedder) -> None:
    review = (
        "## Review questions\n\n"
        "1. Give three features of alveoli that make them efficient for gas exchange.\n"
        "2. Explain how the diaphragm makes air enter the lungs."
    )
    body = (
        "## The alveoli and gas exchange\n\nAlveoli have very thin walls and a huge surface "
        "area, so gases diffuse quickly between air and blood."
    )
    hits = [
        make_hit("rq", review, title="Lungs", heading_path=["Lungs", "Review questions"]),
        make_hit("alv", body, title="Lungs", heading_path=["Lungs", "The alveoli"]),
    ]
    ans = compose_answer("Why are alveoli efficient for gas exchange?", hits, hashing)
    assert "Give three features" not in ans.text
    assert "thin walls" in ans.text


def test_a_source_line_wrap_does_not_cut_a_sentence() -> None:
    text = (
        "Leaving a medicine where a child can reach it can lead to a fine of up to\n"
        "300 dollars in some places. Store medicines up high.\n"
    )
    assert split_sentences(text) == [
        "Leaving a medicine where a child can reach it can lead to a fine of up to 300 dollars "
        "in some places.",
        "Store medicines up high.",
    ]
    wrapped = (
        "Most toddlers between one and two years old need eleven to fourteen hours of sleep in\n"
        "Canada and elsewhere, naps included.\n"
    )
    assert len(split_sentences(wrapped)) == 1


SLEEP_TALK = (
    "Maya Chen: How much sleep does a two-year-old need?\n"
    "Dr. Samuel Okafor: So a toddler might need eleven to fourteen hours of sleep in a day. "
    "Most of it comes as about eleven hours at night, plus a nap."
)


def _talk_hit() -> object:
    # Captions: the host's question 0:06-0:10, then two cues of the answer.
    q_end = SLEEP_TALK.index("\n")
    second = SLEEP_TALK.index("Most of it")
    cues = [
        [0, q_end, 6.0, 10.0, "Maya Chen"],
        [q_end + 1, second, 10.0, 30.0, "Dr. Samuel Okafor"],
        [second, len(SLEEP_TALK), 55.0, 61.0, "Dr. Samuel Okafor"],
    ]
    return make_hit(
        "talk",
        SLEEP_TALK,
        title="Toddler sleep talk",
        start_ts="00:00:06.000",
        end_ts="00:01:01.000",
        speakers=["Maya Chen", "Dr. Samuel Okafor"],
        cues=cues,
    )


def test_transcript_quotes_carry_no_label_no_dangling_opener_and_their_cue_times(
    hashing: HashingEmbedder,
) -> None:
    ans = compose_answer(
        "How many hours at night does a two-year-old sleep?",
        [_talk_hit()],  # type: ignore[list-item]
        hashing,
        max_sentences=1,
        relative_floor=0.0,
    )
    assert "Okafor:" not in ans.text and not ans.text.startswith("So ")
    (citation,) = ans.citations
    quoted = ans.sentences[0][0]
    if "eleven hours at night" in quoted:
        assert (citation.start_ts, citation.end_ts) == ("00:00:55.000", "00:01:01.000")
    else:
        assert quoted.startswith("A toddler might")
        assert (citation.start_ts, citation.end_ts) == ("00:00:10.000", "00:00:30.000")
    assert citation.speakers == ("Dr. Samuel Okafor",)
    assert citation.quote and citation.quote.split()[0] in SLEEP_TALK


def test_the_lead_sentence_drops_its_dangling_connective(hashing: HashingEmbedder) -> None:
    ans = compose_answer(
        "How much sleep does a toddler need in a day?",
        [_talk_hit()],  # type: ignore[list-item]
        hashing,
        max_sentences=2,
        relative_floor=0.0,
    )
    assert all(not s.startswith(("So ", "Dr. Samuel")) for s, _ in ans.sentences)
    assert "A toddler might need eleven to fourteen hours" in ans.text


def _section_hit(doc: str, title: str, heading: str, body: str, position: int = 0) -> object:
    return make_hit(
        f"{doc}-{position}",
        f"## {heading}\n\n{body}",
        title=title,
        doc_id=doc,
        position=position,
        heading_path=[title, heading],
        heading=heading,
    )


def test_a_page_about_the_topic_is_not_answered_from_another_page(
    real_embedder: Embedder,
) -> None:
    """ "What is ibuprofen used for?" once quoted "Unlike ibuprofen, it has little effect on
    inflammation" from the acetaminophen page: when the lead's page is titled with the whole
    topic, other pages are quoted only when their titles name it too."""
    hits = [
        _section_hit(
            "ibu",
            "Ibuprofen",
            "Common uses",
            "People most often use ibuprofen for short-term relief of headache, muscle aches "
            "and fever. Because it reduces inflammation as well as pain, it suits pain that "
            "comes with swelling.",
        ),
        _section_hit(
            "para",
            "Acetaminophen",
            "What it is",
            "Acetaminophen is a common pain reliever and fever reducer. Unlike ibuprofen, it has "
            "little effect on inflammation, but it is usually gentler on the stomach.",
        ),
    ]
    ans = compose_answer("What is ibuprofen used for?", hits, real_embedder, relative_floor=0.3)
    assert {c.chunk_id for c in ans.citations} == {"ibu-0"}, ans.text
    assert "Unlike ibuprofen" not in ans.text


def test_the_section_rule_does_not_drop_another_record_of_the_topic(
    real_embedder: Embedder,
) -> None:
    """Flat FAQ records: the lead answers from a record whose question names the aspect; a
    second record on the same topic with no question of its own (the reference answer, in
    MedQuAD) may still follow it, on its own score."""
    hits = [
        make_hit(
            "faq",
            "Joubert syndrome\nHow might Joubert syndrome be treated? Treatment of Joubert "
            "syndrome is symptomatic and supportive, with physical and speech therapy.",
            title="Joubert syndrome",
            doc_id="faq",
        ),
        make_hit(
            "ghr",
            "Joubert syndrome\nTreatment for Joubert syndrome depends on the symptoms; infants "
            "with abnormal breathing may need breathing support and physical therapy.",
            title="Joubert syndrome",
            doc_id="ghr",
        ),
    ]
    ans = compose_answer("What are the treatments for Joubert syndrome?", hits, real_embedder)
    assert {c.chunk_id for c in ans.citations} == {"faq", "ghr"}, ans.text


def test_a_dangling_otherwise_is_dropped(hashing: HashingEmbedder) -> None:
    hit = make_hit("t", "Otherwise, it is often best to stay nearby without giving in.")
    ans = compose_answer("Is it best to stay nearby?", [hit], hashing, min_sentence_score=0.0)
    assert ans.sentences[0][0].startswith("It is often best"), ans.text


def test_a_rules_answer_and_each_rules_refusal_name_their_decision(real_embedder: Embedder) -> None:
    paper = [make_hit("p1", "Paper 1 lasts two hours and covers algebra.", title="Exams")]
    kept = compose_answer("How long does paper 1 last?", paper, real_embedder)
    assert not kept.no_answer and kept.answer_decision.by == "rules"
    assert kept.answer_decision.answered
    renumbered = compose_answer("When is paper 2?", paper, real_embedder)
    assert renumbered.no_answer and renumbered.answer_decision.by == "check:renumbered"
    fee = [make_hit("f", "The exam fee for paper 1 is set by the school.", title="Exams")]
    priced = compose_answer("How much is the exam fee for paper 1?", fee, real_embedder)
    assert priced.no_answer and priced.answer_decision.by == "check:measure_unmet"
    assert compose_answer("When?", [], real_embedder).answer_decision.by == "no passages"
