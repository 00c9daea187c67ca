from __future__ import annotations

import pytest

from ragchat.agents.heuristics.topics import noun_topic, subject


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("My washer is showing E21", "E21"),
        ("What does WM-814 mean?", "WM-814"),
        # a range or a number with its unit is no code: the programme is the subject
        ("How long does the Eco 40-60 programme take?", "Eco 40-60 programme"),
        ("Is the 2-year warranty on parts only?", "2-year warranty"),
    ],
)
def test_a_code_is_letters_then_digits(question: str, expected: str) -> None:
    """ "40-60" was taken for a code, so "it" became "40-60" instead of the programme."""
    assert subject(question) == expected


def test_a_source_loses_a_tie_with_what_is_asked_about() -> None:
    """ "a gift from a client": the gift is what "it" means next."""
    assert noun_topic("How much can I accept as a gift from a client?") == "gift"
    assert noun_topic("Can I get a letter from my GP?") == "letter"
    # not a tie: the longer run wins wherever it is
    assert noun_topic("Can I get a letter from the occupational health team?") == (
        "occupational health team"
    )


def test_a_common_noun_is_found_beside_a_proper_one() -> None:
    question = "How much can I claim for dinner on a UK trip?"
    assert noun_topic(question) == "UK trip"
    assert noun_topic(question, common=True) == "dinner"
