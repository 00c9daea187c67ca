from __future__ import annotations

import pytest

from ragchat.agents.heuristics.restate import (
    asks_value,
    for_group,
    gist,
    is_yes_no,
    own_question,
    proper_slot,
    qualified,
    redo,
    same_slot,
)


@pytest.mark.parametrize(
    ("previous", "rest", "expected"),
    [
        (
            "What's the usual adult dose of amoxicillin?",
            "for children",
            "What's the usual dose of amoxicillin for children?",
        ),
        ("How much should adults take?", "for teenagers", "How much should teenagers take?"),
        ("Is it safe for the elderly?", "for kids", "Is it safe for kids?"),
        # nothing to swap: the previous question named no group, or the rest names none
        ("What is the maximum dose of paracetamol?", "for children", ""),
        ("What's the usual adult dose of amoxicillin?", "with food", ""),
    ],
)
def test_for_group_swaps_one_group_for_another(previous: str, rest: str, expected: str) -> None:
    assert for_group(previous, rest, "?") == expected


def test_gist_is_what_a_question_asks_about() -> None:
    assert gist("What's the usual dose of amoxicillin for children?") == (
        "usual dose of amoxicillin"
    )
    assert gist("What is the hotel cap in London?", "London") == "hotel cap"


def test_a_value_is_a_noun_phrase_ending_in_a_measure() -> None:
    assert asks_value("the drain hose height")
    assert asks_value("the notice period")
    assert not asks_value("warfarin")
    assert not asks_value("height")  # a bare measure says nothing about what is measured
    assert own_question("the drain hose height", "?") == "What is the drain hose height?"
    assert own_question("the opening times", "?") == "What are the opening times?"


def test_yes_no_questions_start_with_an_auxiliary() -> None:
    assert is_yes_no("Should I throw those away?")
    assert is_yes_no("And can I split it?")
    assert not is_yes_no("What's the hotel cap in London?")


def test_same_slot_replaces_the_phrase_after_the_same_preposition() -> None:
    assert same_slot("What's the hotel cap in London?", "in Paris", "hotel cap") == (
        "What's the hotel cap in Paris?"
    )
    assert same_slot("How much for dinner on a UK trip?", "for lunch", "UK trip") == (
        "How much for lunch on a UK trip?"
    )
    # not the topic, not without a matching preposition
    assert same_slot("What are the treatments for psoriasis?", "for children", "psoriasis") == ""
    assert same_slot("What's the hotel cap in London?", "for Paris", "hotel cap") == ""
    assert same_slot("What's the hotel cap in London?", "Paris", "hotel cap") == ""


def test_proper_slot_replaces_a_place_not_the_first_word() -> None:
    assert proper_slot("What's the hotel cap in London?", "New York") == (
        "What's the hotel cap in New York?"
    )
    assert proper_slot("Ibuprofen dose for adults?", "Paris") == ""
    assert proper_slot("What's the hotel cap in London?", "lunch") == ""


def test_the_head_noun_says_whether_a_phrase_names_a_value() -> None:
    assert asks_value("the late cancellation fee for classes")
    assert not asks_value("the bolts for the drain hose")
    assert own_question("the late cancellation fee for classes", "?") == (
        "What is the late cancellation fee for classes?"
    )


def test_qualified_narrows_the_previous_question() -> None:
    assert qualified("How much is the off-peak plan?", "for students") == (
        "How much is the off-peak plan for students?"
    )
    assert qualified("How much is the off-peak plan?", "students") == ""


def test_redo_takes_the_latest_question_that_asked_about_an_action() -> None:
    earlier = ["Does it cost anything?", "Can I freeze my membership?"]
    assert redo("How do I do it?", earlier) == "How do I freeze my membership?"
    assert redo("How do I do it?", ["Do I need a fit note?"]) == "How do I do it?"
    assert redo("Who do I send it to?", earlier) == "Who do I send it to?"
