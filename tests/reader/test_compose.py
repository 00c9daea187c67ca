"""The offline reply from the shipped reader: it quotes the sentence that answers, cites its
section first, gives a pronoun its subject, and refuses what the passages do not answer."""

from __future__ import annotations

import dataclasses

from tests.agents.heuristics.conftest import make_hit

from ragchat.embed.base import Embedder
from ragchat.reader.compose import answer
from ragchat.reader.decision import refused
from ragchat.reader.model import ReaderModel
from ragchat.types import Hit

NO = "Your documents don't cover this."

LEAFLET = [
    make_hit(
        "what",
        "Ibuprofen is a non-steroidal anti-inflammatory drug, usually shortened to NSAID. "
        "It is sold without a prescription as tablets and liquids. It reduces the body's "
        "production of prostaglandins, chemical messengers involved in pain and fever.",
        title="Ibuprofen", heading_path=["Ibuprofen", "What it is"], doc_id="leaflet",
        position=0,
    ),
    make_hit(
        "dose",
        "Adults can take 200 to 400 mg every 4 to 6 hours. Do not take more than 1,200 mg "
        "in 24 hours without a doctor's advice.",
        title="Ibuprofen", heading_path=["Ibuprofen", "Dose"], doc_id="leaflet", position=1,
    ),
    make_hit(
        "storage",
        "Keep the tablets below 25 °C, out of the sight and reach of children.",
        title="Ibuprofen", heading_path=["Ibuprofen", "Storing"], doc_id="leaflet",
        position=2,
    ),
]  # fmt: skip


def ask(question: str, embedder: Embedder, model: ReaderModel, hits=LEAFLET):  # type: ignore[no-untyped-def]
    return answer(question, hits, embedder, model, no_answer_message=NO)


def test_the_sentence_that_answers_is_quoted_and_its_section_cited_first(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("How much can an adult take?", real_embedder, model)
    assert not reply.no_answer, reply.answer_decision
    assert reply.answer_decision.answered and reply.answer_decision.by == "reader"
    threshold = model.card.choices.threshold
    assert reply.answer_decision.threshold == threshold
    assert (reply.answer_decision.p_answerable or 0.0) >= threshold
    assert "200 to 400 mg" in reply.text
    assert reply.citations[0].section_path[-1] == "Dose"


def test_a_lead_opening_with_a_pronoun_is_quoted_with_its_subject(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("How does ibuprofen work?", real_embedder, model)
    assert not reply.no_answer, reply.answer_decision
    if any(s.startswith("It reduces") for s, _ in reply.sentences):
        assert reply.text.index("Ibuprofen is") < reply.text.index("It reduces"), reply.text


def test_what_the_passages_do_not_answer_is_refused_naming_the_closest_section(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("What are the best things to see in Lisbon in three days?", real_embedder, model)
    assert reply.no_answer, reply.text
    assert reply.text.startswith(NO)
    assert "Ibuprofen" in reply.text
    assert reply.answer_decision.by == "reader" and not reply.answer_decision.answered
    assert reply.citations == []


def test_no_passages_is_a_refusal(real_embedder: Embedder, model: ReaderModel) -> None:
    reply = ask("How much can I take?", real_embedder, model, hits=[])
    assert reply.no_answer and reply.answer_decision == refused("no passages")


def test_a_chosen_passage_too_short_for_a_sentence_is_quoted_whole(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    selection = [make_hit("sel", "indigestion, heartburn, nausea or stomach pain")]
    reply = answer(
        "What are the possible side effects?", selection, real_embedder, model,
        no_answer_message=NO, require_answerable=False,
    )  # fmt: skip
    assert not reply.no_answer
    assert reply.text == "indigestion, heartburn, nausea or stomach pain [1]"
    assert [c.chunk_id for c in reply.citations] == ["sel"]


def test_a_refusal_names_the_reader_with_its_probability_and_threshold(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    strict = ReaderModel(
        model._scorer,
        model._refusal,
        dataclasses.replace(
            model.card, choices=dataclasses.replace(model.card.choices, threshold=1.0)
        ),
        model.head,
    )
    reply = ask("How much can an adult take?", real_embedder, strict)
    decision = reply.answer_decision
    assert reply.no_answer and decision.by == "reader" and not decision.answered
    assert decision.threshold == 1.0 and decision.p_answerable is not None
    assert decision.p_answerable < 1.0
    assert str(decision).startswith("reader: P(answerable) 0.")


CALL = [
    ("Gareth Price", "Right, communication is the last thing on my list for today."),
    ("Gareth Price", "Once we're on site, I'd like a weekly site meeting."),
    ("Gareth Price", "Thursdays at eight, before the lads get going?"),
    ("Priya Shah", "Eight's fine."),
    ("Dana Whitcombe", "I'll send the agenda round the day before, with the photos."),
]
ALLOTMENT = [
    ("Sam Okoro", "Welcome everyone, this is the Fernhill allotment committee call for March."),
    ("Sam Okoro", "First, the water troughs. When are they being switched back on?"),
    ("Joan Pryce", "The fourteenth of April, weather permitting."),
    ("Sam Okoro", "And the skip for green waste?"),
    ("Joan Pryce", "That arrives on the second Saturday in May and stays for the weekend."),
    ("Raj Mehta", "I'd like us to do a full plot inspection this summer."),
    ("Sam Okoro", "When?"),
    ("Raj Mehta", "The last weekend of June."),
    ("Joan Pryce", "Next item. Plot rents are going up to forty-two pounds a year from October."),
    ("Raj Mehta", "Half price for the over-sixty-fives, as before."),
]


def _call_hit(lines: list[tuple[str, str]] = CALL) -> Hit:
    text, cues, at = "", [], 0.0
    for speaker, said in lines:
        line = f"{speaker}: {said}"
        start = len(text)
        text += line + "\n"
        cues.append([start, start + len(line), at, at + 4.0, speaker])
        at += 5.0
    return make_hit(
        "call", text.strip(), title="Kickoff call", doc_id="call", cues=cues, kind="vtt",
        source="call.vtt",
    )  # fmt: skip


def test_a_transcript_lead_is_quoted_with_the_lines_that_answer_it(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    """The line naming the topic ("a weekly site meeting") is the lead; the answer comes a
    line later, asked back as a question; the exchange is quoted as one passage with one
    marker, from the line before the lead, and the citation spans its captions."""
    reply = ask("When are the site meetings?", real_embedder, model, hits=[_call_hit()])
    assert not reply.no_answer, reply.answer_decision
    assert "weekly site meeting" in reply.text
    assert "Thursdays at eight" in reply.text
    assert reply.text.index("weekly site meeting") < reply.text.index("Thursdays at eight")
    assert reply.citations[0].end_ts is not None
    assert reply.citations[0].end_ts >= "00:00:14"  # the third caption ends at 14 s
    assert reply.text.startswith("Communication is the last thing")  # "Right," is an opener
    assert reply.text.count("[1]") == 1


def test_a_passage_without_captions_gets_no_following_lines(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("How much can an adult take?", real_embedder, model)
    assert "25 °C" not in reply.text and "Ibuprofen is" not in reply.text


def test_a_chosen_line_inside_the_exchange_is_quoted_once_in_its_place(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("When is the plot inspection?", real_embedder, model, hits=[_call_hit(ALLOTMENT)])
    assert not reply.no_answer, reply.answer_decision
    assert reply.text.count("The last weekend of June") == 1, reply.text
    assert reply.text.index("plot inspection this summer") < reply.text.index("When?")
    assert reply.text.index("When?") < reply.text.index("The last weekend of June")
    assert reply.text.index("The last weekend of June") < reply.text.index("Next item")
    assert reply.text.count("[1]") == 1, reply.text


BLEEDING = [
    make_hit(
        "bleeding",
        "Press firmly on the wound with a clean pad or dressing. Keep the pressure on for at "
        "least 10 minutes without lifting to check. If blood soaks through, put a second pad "
        "on top of the first. Do not remove the first pad. Seek medical help if the bleeding "
        "has not stopped after 30 minutes.",
        title="First aid", heading_path=["First aid", "Wounds"], doc_id="aid",
        position=0,
    ),
]  # fmt: skip


def test_a_prose_lead_is_quoted_with_the_sentences_around_it(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    """The sentence that says what to do ("Do not remove the first pad") sits between two the
    scorer rates higher; rated too low to be chosen for itself, it is quoted as their
    neighbour."""
    question = "The blood has soaked right through the dressing, do I take it off and start again?"
    reply = ask(question, real_embedder, model, hits=BLEEDING)
    assert not reply.no_answer, reply.answer_decision
    assert "second pad" in reply.text and "Do not remove the first pad" in reply.text, reply.text
    # in reading order, one section cited once
    assert reply.text.index("second pad") < reply.text.index("Do not remove")
    assert len(reply.citations) == 1


def test_a_lead_that_answers_by_itself_is_quoted_without_its_neighbours(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    reply = ask("How much can an adult take?", real_embedder, model)
    assert "200 to 400 mg" in reply.text, reply.text
    assert "1,200 mg" not in reply.text, reply.text


PRICES = [
    make_hit(
        "pots",
        "SKU: PT02; Product: Terracotta pot; Pot size: 25cm; Price (£): 9.99.\n"
        "SKU: PT03; Product: Terracotta pot; Pot size: 40cm; Price (£): 24.99.\n"
        "SKU: PT04; Product: Glazed pot; Pot size: 30cm; Price (£): 18.50.",
        title="Price list", heading_path=["Price list", "Pots and containers"],
        doc_id="prices", position=0,
    ),
]  # fmt: skip


def test_a_table_row_lead_is_quoted_without_its_neighbouring_rows(
    real_embedder: Embedder, model: ReaderModel
) -> None:
    """A lead that does not answer by itself (no price asked for), in a table: the rows
    beside it are other records."""
    reply = ask("Tell me about the 40cm terracotta pot", real_embedder, model, hits=PRICES)
    assert not reply.no_answer, reply.answer_decision
    assert "PT03" in reply.text, reply.text
    assert "PT04" not in reply.text and "18.50" not in reply.text, reply.text


ROTA = [
    make_hit(
        "rota",
        "Date: 7 March; Ride: Fast; Leader: Sam Cole; Back marker: Priya Nair.\n"
        "Date: 7 March; Ride: Social; Leader: Jo Bell; Back marker: Ann Hale.\n"
        "Date: 14 March; Ride: Fast; Leader: Priya Nair; Back marker: Tom Ward.\n"
        "Date: 14 March; Ride: Social; Leader: Sam Cole; Back marker: Jo Bell.",
        title="Ride rota", heading_path=["Ride rota", "Rota"], doc_id="rota", position=0,
    ),
]  # fmt: skip


def test_the_best_row_is_quoted_first(real_embedder: Embedder, model: ReaderModel) -> None:
    """Rows are records, not a text read in order: the row the question names comes before
    the rows above it that are quoted too."""
    reply = ask("who is back marker on the 14 March fast ride", real_embedder, model, hits=ROTA)
    assert not reply.no_answer, reply.answer_decision
    first = reply.sentences[0][0]
    assert "14 March" in first and "Tom Ward" in first, reply.text
