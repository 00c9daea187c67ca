"""The offline answers to the sample knowledge bases' example questions (the package README's
and the ones users tried): each cites the section that answers it and quotes no question,
heading, speaker label or dangling connective."""

from __future__ import annotations

import re

import pytest

from ragchat.agents.engine import ChatEngine
from ragchat.agents.types import TurnResult

from .helpers import Chat, run

# (agent, question, a section on the lead citation's heading path, words the reply must hold)
CASES = [
    ("medical", "What helps with hay fever?", "Treatment", ("antihistamine",)),
    ("medical", "How is type 2 diabetes treated?", "Management", ()),
    ("medical", "What are the symptoms of type 2 diabetes?", "Symptoms", ()),
    ("medical", "How is type 2 diabetes diagnosed?", "Diagnosis", ()),
    ("medical", "What are common migraine triggers?", "Common triggers", ()),
    ("medical", "How is a migraine treated?", "Treatment", ()),
    pytest.param(
        "medical",
        "What is ibuprofen used for?",
        "Common uses",
        ("headache",),
        marks=pytest.mark.xfail(
            strict=True,
            reason="known miss of the reader retrained with the head: it rates 'It reduces the "
            "body's production of prostaglandins … pain, fever and inflammation' (What it is) "
            "above the list of uses, so the reply quotes both but cites 'What it is' first",
        ),
    ),
    ("medical", "Tell me about ibuprofen", "What it is", ("nsaid",)),
    ("medical", "Can I take ibuprofen if I am on warfarin?", "", ("warfarin",)),
    ("medical", "Will amoxicillin help with a common cold?", "", ("virus",)),
    (
        "tutor",
        "Why are alveoli well suited to gas exchange?",
        "The alveoli and gas exchange",
        (),
    ),
    ("tutor", "What does the sinoatrial node do?", "", ("pacemaker",)),
    ("tutor", "How is cardiac output calculated?", "", ("stroke volume",)),
    ("parenting", "How much sleep does a two-year-old need?", "", ("hours",)),
    ("parenting", "What should I do during a toddler tantrum?", "During a tantrum", ()),
]

_PROMPT = re.compile(r"\b(Give|List|Explain|Describe) (three|the|how)\b")


def _ask(engine: ChatEngine, agent: str, question: str) -> TurnResult:
    return run(Chat(engine).say(question, agent=agent))


@pytest.mark.parametrize(("agent", "question", "section", "needles"), CASES)
def test_example_questions_cite_the_answering_section(
    engine: ChatEngine, agent: str, question: str, section: str, needles: tuple[str, ...]
) -> None:
    result = _ask(engine, agent, question)
    assert not result.no_answer, result.reply
    assert result.citations, result.reply
    if section:
        lead = result.citations[0]
        assert section in lead.section_path, (lead.section_path, result.reply)
    reply = result.reply.lower()
    for needle in needles:
        assert needle in reply, result.reply
    body = result.reply.split("\n\n")[0]
    assert "?" not in body, "a question was quoted as an answer: " + result.reply
    assert not _PROMPT.search(body), result.reply


def test_hay_fever_answer_is_about_treatment_not_trivia(engine: ChatEngine) -> None:
    reply = _ask(engine, "medical", "What helps with hay fever?").reply
    assert "does not cause a fever" not in reply
    assert "Children can have hay fever too" not in reply


def test_an_answer_about_one_medicine_quotes_no_other(engine: ChatEngine) -> None:
    result = _ask(engine, "medical", "What is ibuprofen used for?")
    assert {c.title for c in result.citations} == {"Ibuprofen"}, result.reply


def test_tantrum_advice_comes_from_what_to_do_not_when_to_seek_help(engine: ChatEngine) -> None:
    result = _ask(engine, "parenting", "What should I do during a toddler tantrum?")
    assert all("During a tantrum" in c.section_path for c in result.citations), result.reply
    assert "Otherwise," not in result.reply


def test_diabetes_treatment_is_not_the_definition(engine: ChatEngine) -> None:
    result = _ask(engine, "medical", "How is type 2 diabetes treated?")
    assert all("Risk factors" not in c.section_path for c in result.citations), result.reply
    assert all("What it is" not in c.section_path for c in result.citations), result.reply


def test_transcript_answers_carry_no_speaker_label_or_dangling_opener(
    engine: ChatEngine,
) -> None:
    for question in (
        "How much sleep does a two-year-old need?",
        "When do toddlers usually go from two naps to one?",
        "What is the difference between nightmares and night terrors?",
    ):
        result = _ask(engine, "parenting", question)
        assert "Okafor:" not in result.reply and "Maya Chen:" not in result.reply, result.reply
        assert not re.match(r"^(So|And|But|Well)\b", result.reply), result.reply
