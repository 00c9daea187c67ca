from __future__ import annotations

import pytest

from ragchat.agents.heuristics.title import FALLBACK, make_title


@pytest.mark.parametrize(
    ("message", "title"),
    [
        (
            "What is the maximum daily dose of acetaminophen for an adult?",
            "Maximum Daily Dose of Acetaminophen",
        ),
        ("Can I take ibuprofen if I am on warfarin?", "Ibuprofen on Warfarin"),
        ("Hi! Can you tell me about NSAIDs and stomach ulcers?", "NSAIDs and Stomach Ulcers"),
        ("What does the sinoatrial node do?", "Sinoatrial Node"),
        ("I feel so overwhelmed with work lately", "Overwhelmed with Work"),
        ("tell me about type 2 diabetes", "Type 2 Diabetes"),
    ],
)
def test_titles(message: str, title: str) -> None:
    assert make_title(message) == title


def test_limits() -> None:
    long = "supercalifragilistic " * 3 + "pneumonoultramicroscopicsilicovolcanoconiosis " * 3
    title = make_title(long, max_words=6)
    assert len(title) <= 60 and len(title.split()) <= 6
    three = make_title("My toddler screams at bedtime every single night, please help", max_words=3)
    assert three == "Toddler Screams Bedtime"
    assert not make_title("What about migraine?!").endswith(("?", "!", "."))


def test_fallbacks() -> None:
    assert make_title("hi") == FALLBACK == "New conversation"
    assert make_title("???") == FALLBACK
    assert (
        make_title("hello", "Hi! I can help with migraine questions.")
        == "Help with Migraine Questions"
    )
    assert make_title("", "") == FALLBACK
