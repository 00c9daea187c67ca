"""Answers on a user's own documents (issue 25): the table row asked about with its column
names, error-code rows a PDF split in two, glossary entries as sentences, dates for "when",
and questions whose key terms the documents never mention refused."""

from __future__ import annotations

from ragchat.agents.heuristics.compose import compose_answer
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.reader.candidates import gloss_sentence
from ragchat.reader.text import segment, strip_speaker
from ragchat.types import plain_preview

from .conftest import make_hit

HOTELS = (
    "City: London; Maximum per night: 180; Currency: GBP.\n"
    "City: Manchester; Maximum per night: 120; Currency: GBP.\n"
    "City: Paris; Maximum per night: 190; Currency: EUR."
)
PATH = ["Handbook", "Travel", "Hotel allowances"]


def test_the_row_asked_about_is_quoted_with_its_column_names(real_embedder: Embedder) -> None:
    hits = [make_hit("t", HOTELS, title="Handbook", heading_path=PATH)]
    out = compose_answer("What's the most we can spend on a hotel in London?", hits, real_embedder)
    assert out.text.startswith("City: London; Maximum per night: 180")
    assert "Manchester" not in out.text and "Paris" not in out.text


def test_a_table_row_keeps_its_first_column_name() -> None:
    row = "Length of service: Less than 2 years; Annual leave: 25 days."
    assert strip_speaker(row) == row
    assert strip_speaker("Tom Okoye: Yes. The bill came to 420.") == "Yes. The bill came to 420."


PDF_PAGE = """4. Error codes
If the machine detects a fault it stops and shows a code on the display.
Code Meaning What to do
E10 No water coming in
Check that the tap is open and the inlet hose is not kinked.
E21 Water not draining
Clean the drain pump filter and check the drain hose.
Programme Max load Duration
Cotton 8 kg 3 h 30 min
Quick 15' 2 kg 15 min
Use Quick 15' only for lightly soiled items."""


def test_pdf_table_rows_become_sentences() -> None:
    texts = [p.text for p in segment(PDF_PAGE)]
    assert "Cotton 8 kg 3 h 30 min." in texts
    assert "Quick 15' 2 kg 15 min." in texts  # the last row of the run
    quick = next(p for p in segment(PDF_PAGE) if p.text.startswith("Use Quick"))
    assert quick.heading != "Quick 15' 2 kg 15 min"


def test_an_error_code_answer_names_the_code_and_its_meaning(real_embedder: Embedder) -> None:
    hits = [make_hit("p4", PDF_PAGE, title="Washing machine manual", page=4)]
    out = compose_answer("What does error E21 mean?", hits, real_embedder)
    assert out.text.startswith("E21 Water not draining — Clean the drain pump filter")


def test_glossary_entries_read_as_sentences() -> None:
    assert gloss_sentence("Bile – a liver secretion that emulsifies fats.") == (
        "Bile is a liver secretion that emulsifies fats."
    )
    assert gloss_sentence("Emulsify – to break large drops of fat.").startswith("Emulsify means")
    assert gloss_sentence("Denatured – describes an enzyme that no longer works.") == (
        "Denatured describes an enzyme that no longer works."
    )
    assert gloss_sentence("It rained – a lot.") == "It rained – a lot."


def test_previews_carry_no_markup() -> None:
    text = "### Hotel allowances\n\n- The **most** you may spend\n|---|---|\n| a | b |"
    assert plain_preview(text) == "Hotel allowances The most you may spend | a | b |"


WORKSHOP = (
    "The compost workshop will be run by the council's compost adviser. "
    "The compost workshop will be held on Saturday 14 June at the main shed."
)


def test_when_and_who_prefer_the_sentence_with_a_date_or_a_name() -> None:
    hits = [make_hit("m", WORKSHOP, title="Committee meeting")]
    emb = HashingEmbedder()
    when = compose_answer("When is the compost workshop?", hits, emb, max_sentences=1)
    assert "Saturday 14 June" in when.text


def test_a_named_thing_the_documents_never_mention_is_refused() -> None:
    hits = [make_hit("t", HOTELS, title="Handbook", heading_path=PATH)]
    emb = HashingEmbedder()
    tokyo = compose_answer("How much can I spend on a hotel in Tokyo?", hits, emb)
    assert tokyo.no_answer and "Handbook" in tokyo.text
    paris = compose_answer("How much can I spend on a hotel in Paris?", hits, emb)
    assert not paris.no_answer and "190" in paris.text


LEAFLET = [
    make_hit(
        "other",
        "Simple painkillers for fever, such as paracetamol, can be taken alongside amoxicillin.",
        title="Amoxicillin leaflet",
        heading_path=["Amoxicillin leaflet", "Other medicines and amoxicillin"],
    ),
    make_hit(
        "preg",
        "If you are pregnant, ask your doctor before taking this medicine.",
        title="Amoxicillin leaflet",
        heading_path=["Amoxicillin leaflet", "Pregnancy and breastfeeding"],
    ),
]


def test_pregnancy_is_not_answered_by_a_sentence_about_paracetamol_alone() -> None:
    emb = HashingEmbedder()
    out = compose_answer("Is it safe to take paracetamol when pregnant?", LEAFLET[:1], emb)
    assert out.no_answer and "Amoxicillin leaflet" in out.text
    ok = compose_answer("Can I take paracetamol with amoxicillin?", LEAFLET[:1], emb)
    assert not ok.no_answer and "alongside amoxicillin" in ok.text
