from __future__ import annotations

import pytest

from ragchat.agents.heuristics.reformulate import is_follow_up, reformulate, topic
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
        ("Is type 2 diabetes hereditary?", "type 2 diabetes hereditary"),
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
