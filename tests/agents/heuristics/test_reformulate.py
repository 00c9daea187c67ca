from __future__ import annotations

import pytest

from ragchat.agents.heuristics.reformulate import (
    conversation_topic,
    is_follow_up,
    reformulate,
    subject,
    topic,
)
from ragchat.types import HistoryMessage


def conv(*questions: str) -> list[HistoryMessage]:
    out: list[HistoryMessage] = []
    for q in questions:
        out += [HistoryMessage("user", q), HistoryMessage("assistant", "An answer [1].")]
    return out


IBU = conv("What is ibuprofen used for?")

CASES = [
    (IBU, "What are its side effects?", "What are ibuprofen side effects?"),
    (IBU, "And for children?", "ibuprofen for children?"),
    (IBU, "Is it safe for kids?", "Is ibuprofen safe for kids?"),
    (IBU, "How much should I take?", "How much ibuprofen should I take?"),
    (IBU, "Side effects?", "ibuprofen side effects?"),
    (IBU, "What about for kids?", "ibuprofen for kids?"),
    (IBU, "What are the side effects?", "What are the side effects of ibuprofen?"),
    (IBU, "Can I take it with food?", "Can I take ibuprofen with food?"),
    (IBU, "Is this medicine safe in pregnancy?", "Is ibuprofen safe in pregnancy?"),
    (
        conv("What are the side effects of ibuprofen?"),
        "What about acetaminophen?",
        "What are the side effects of acetaminophen?",
    ),
    (
        conv("What does the sinoatrial node do?"),
        "Where is it located?",
        "Where is sinoatrial node located?",
    ),
    (
        conv("Tell me about high blood pressure"),
        "What causes it?",
        "What causes high blood pressure?",
    ),
    (
        conv("Tell me about high blood pressure"),
        "How is that treated?",
        "How is high blood pressure treated?",
    ),
    (
        conv("Tell me about type 2 diabetes"),
        "What are the symptoms?",
        "What are the symptoms of type 2 diabetes?",
    ),
    (
        conv("What is amoxicillin?"),
        "Does it help with a cold?",
        "Does amoxicillin help with a cold?",
    ),
    (
        conv("What is amoxicillin?"),
        "Can I drink alcohol while taking it?",
        "Can I drink alcohol while taking amoxicillin?",
    ),
    (conv("What is amoxicillin?"), "It's safe for babies?", "Amoxicillin is safe for babies?"),
    (
        conv("What is acetaminophen?"),
        "what's the maximum dose?",
        "what's the maximum dose of acetaminophen?",
    ),
    (conv("What is acetaminophen?"), "Does the same apply to ibuprofen?", "What is ibuprofen?"),
    # the most recent user question with a topic wins
    (
        conv("What is migraine?", "What is the sinoatrial node?"),
        "How does it work?",
        "How does sinoatrial node work?",
    ),
]

STANDALONE = [
    (IBU, "What is migraine?"),
    (IBU, "Can I take acetaminophen with warfarin?"),
    (IBU, "Thanks!"),
    (IBU, "What should I do?"),
    ([], "What are its side effects?"),
    ([], "And for children?"),
]


@pytest.mark.parametrize(("history", "message", "expected"), CASES)
def test_follow_ups_are_resolved(
    history: list[HistoryMessage], message: str, expected: str
) -> None:
    assert is_follow_up(message, history)
    assert reformulate(message, history) == expected


@pytest.mark.parametrize(("history", "message"), STANDALONE)
def test_standalone_messages_are_unchanged(history: list[HistoryMessage], message: str) -> None:
    assert not is_follow_up(message, history)
    assert reformulate(message, history) == message


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is ibuprofen used for?", "ibuprofen"),
        ("How much sleep does a two-year-old need?", "sleep"),
        ("What does the sinoatrial node do?", "sinoatrial node"),
        ("Tell me about high blood pressure", "high blood pressure"),
        ("What are common migraine triggers?", "migraine"),
        ("Is type 2 diabetes hereditary?", "type 2 diabetes"),
        ("Is glutaric acidemia type I inherited?", "glutaric acidemia type I"),
        ("What should I do?", ""),
    ],
)
def test_topic(question: str, expected: str) -> None:
    assert topic(question) == expected


def test_only_user_messages_give_the_topic() -> None:
    history = [
        HistoryMessage("user", "What is amoxicillin?"),
        HistoryMessage("assistant", "Ibuprofen is an NSAID [1]."),
    ]
    assert reformulate("Is it safe?", history) == "Is amoxicillin safe?"


# The conversation's subject is kept through follow-ups that name something else in passing.
IBU_WARFARIN = conv("Tell me about ibuprofen", "Can I take it with warfarin?")


def test_a_follow_up_keeps_the_topic_not_the_last_noun() -> None:
    assert reformulate("Can I take it with warfarin?", conv("Tell me about ibuprofen")) == (
        "Can I take ibuprofen with warfarin?"
    )
    assert conversation_topic(IBU_WARFARIN) == "ibuprofen"
    assert reformulate("How much should an adult take?", IBU_WARFARIN) == (
        "How much ibuprofen should an adult take?"
    )
    safe = reformulate("Is it safe in pregnancy?", IBU_WARFARIN)
    assert safe == "Is ibuprofen safe in pregnancy?"


def test_the_topic_holds_over_several_follow_ups() -> None:
    history = conv(
        "I'd like to learn about glutaric acidemia type I.",
        "How common is it?",
        "Which genetic changes are involved?",
    )
    assert conversation_topic(history) == "glutaric acidemia type I"
    assert reformulate("Is it inherited?", history) == "Is glutaric acidemia type I inherited?"
    assert reformulate("How is it treated?", history) == (
        "How is glutaric acidemia type I treated?"
    )


def test_what_about_switches_the_topic_and_a_new_question_sets_it() -> None:
    switched = conv("What are the side effects of ibuprofen?", "What about acetaminophen?")
    assert conversation_topic(switched) == "acetaminophen"
    assert reformulate("Is it safe for kids?", switched) == "Is acetaminophen safe for kids?"
    fresh = conv("Tell me about ibuprofen", "Can I take it with food?", "What is migraine?")
    assert conversation_topic(fresh) == "migraine"
    assert reformulate("How is it treated?", fresh) == "How is migraine treated?"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I'd like to learn about KBG syndrome.", "KBG syndrome"),
        ("I'd like to learn about Down syndrome.", "Down syndrome"),
        ("Tell me about 15q13.3 microdeletion", "15q13.3 microdeletion"),
        (
            "Tell me about autoimmune polyglandular syndrome, type 1",
            "autoimmune polyglandular syndrome, type 1",
        ),
        (
            "Tell me about Urinary Tract Infections in Children",
            "Urinary Tract Infections in Children",
        ),
        ("Tell me about ibuprofen dosage for kids, please", "ibuprofen"),
        ("Tell me about hereditary angioedema", "hereditary angioedema"),
        ("Tell me about type 2 diabetes treatment", "type 2 diabetes"),
        ("Tell me about the side effects of ibuprofen", "ibuprofen"),
        ("I want to learn about flu", "flu"),
        ("What is ibuprofen used for?", "ibuprofen"),
    ],
)
def test_subject_prefers_what_the_message_is_about(message: str, expected: str) -> None:
    assert subject(message) == expected
