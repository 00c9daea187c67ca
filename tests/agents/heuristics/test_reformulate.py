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


# --- what was just said (issue 25) ----------------------------------------------------------


def said(*turns: tuple[str, str]) -> list[HistoryMessage]:
    """A conversation with the replies given (cited, as the agents' answers are)."""
    out: list[HistoryMessage] = []
    for question, reply in turns:
        out += [HistoryMessage("user", question), HistoryMessage("assistant", reply)]
    return out


CETIRIZINE = said(
    ("What is cetirizine used for?", "Cetirizine relieves hay fever symptoms [1]."),
    ("Does that make you drowsy?", "It can make you feel sleepy [1]."),
)


def test_a_demonstrative_subject_refers_back() -> None:
    """It was taken for a new question about "drowsy" (issue 25)."""
    history = CETIRIZINE[:2]
    assert is_follow_up("Does that make you drowsy?", history)
    assert reformulate("Does that make you drowsy?", history) == "Does cetirizine make you drowsy?"
    assert reformulate("Is this normal?", history) == "Is cetirizine normal?"
    assert conversation_topic(CETIRIZINE) == "cetirizine"


@pytest.mark.parametrize(
    "message",
    [
        "My head is pounding… What could it be?",
        "My head is pounding... What could it be?",
        "My head is pounding. What could it be?",
        "My head is pounding, what could it be?",
        "The kettle smells of burning. Is it safe to use?",
    ],
)
def test_a_new_subject_described_in_the_message_is_searched_as_itself(message: str) -> None:
    """After "Does that make you drowsy?", this was searched as "What could drowsy be?"."""
    assert not is_follow_up(message, CETIRIZINE)
    assert reformulate(message, CETIRIZINE) == message


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a condition is not a subject of its own: "it" is still the medicine
        ("If I miss a dose, can I take it later?", "If I miss a dose, can I take ibuprofen later?"),
        ("Thanks. Is it safe for kids?", "Thanks. Is ibuprofen safe for kids?"),
    ],
)
def test_what_the_message_says_before_it_must_name_something(message: str, expected: str) -> None:
    assert reformulate(message, IBU) == expected


def test_a_continuation_that_asks_a_question_becomes_that_question() -> None:
    """The README's follow-up: searched as "ibuprofen what is the maximum dose?" before."""
    history = said(("What are the side effects of ibuprofen?", "Indigestion, heartburn [1]."))
    assert reformulate("and what is the maximum dose?", history) == (
        "What is the maximum dose of ibuprofen?"
    )
    assert reformulate("And for children?", history) == "ibuprofen for children?"


TRANSCRIPT = said(
    (
        "Who is running the compost workshop?",
        "Maria Lopez has agreed to run the compost workshop on Saturday 14 June [1].",
    )
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("When is she free?", "When is Maria Lopez free?"),
        ("How do I contact her?", "How do I contact Maria Lopez?"),
        ("What is her email address?", "What is Maria Lopez's email address?"),
        ("Where is she running it?", "Where is Maria Lopez running compost workshop?"),
    ],
)
def test_she_and_he_are_the_person_the_last_answer_named(message: str, expected: str) -> None:
    assert reformulate(message, TRANSCRIPT) == expected


@pytest.mark.parametrize(
    ("reply", "person"),
    [
        ("Dr Patel said the results are due on Friday [1].", "Dr Patel"),
        ("According to the minutes, Priya will send the agenda [1].", "Priya"),
        ("Tom: I can do the newsletter this month [2].", "Tom"),
    ],
)
def test_the_person_is_found_in_the_last_answer(reply: str, person: str) -> None:
    history = said(("Who is doing it?", reply))
    assert reformulate("Can I email him?", history) == f"Can I email {person}?"


def test_a_person_named_by_nobody_leaves_the_topic_beside_the_question() -> None:
    history = said(("Who runs the compost workshop?", "The workshop is on Saturday [1]."))
    assert reformulate("How do I contact her?", history) == (
        "How do I contact her (compost workshop)?"
    )


def test_they_and_those_are_the_aspect_just_asked_about() -> None:
    history = said(("What are the side effects of ibuprofen?", "Indigestion, heartburn [1]."))
    assert reformulate("Are they common?", history) == "Are side effects of ibuprofen common?"
    assert reformulate("How long do those last?", history) == (
        "How long do side effects of ibuprofen last?"
    )
    leave = said(("How many days of annual leave do I get?", "25 days a year [1]."))
    assert reformulate("Can I carry them over?", leave) == (
        "Can I carry days of annual leave over?"
    )


def test_it_is_what_the_answer_to_a_which_question_introduced() -> None:
    history = said(
        ("Which tablets are best for hay fever?", "Cetirizine is best for hay fever [1].")
    )
    assert reformulate("Does it make you drowsy?", history) == "Does Cetirizine make you drowsy?"
    # and the conversation is now about it
    after = [*history, *said(("Does it make you drowsy?", "Less than older ones [1]."))]
    assert conversation_topic(after) == "Cetirizine"
    assert reformulate("How much should I take?", after) == "How much Cetirizine should I take?"


def test_a_refusal_introduces_nothing() -> None:
    history = [
        HistoryMessage("user", "Which tablets are best for hay fever?"),
        HistoryMessage("assistant", "The documents don't cover that."),
    ]
    assert reformulate("Does it make you drowsy?", history) == "Does hay fever make you drowsy?"


def test_an_aspect_question_keeps_the_topic_for_it() -> None:
    """MedQuAD's "Which genetic changes are involved?" asks about an aspect: "it" afterwards
    is still the condition, whatever the answer named."""
    history = said(
        ("I'd like to learn about KBG syndrome.", "KBG syndrome is a rare disorder [1]."),
        ("Which genetic changes are involved?", "Mutations in the ANKRD11 gene [1]."),
    )
    assert reformulate("How common is it?", history) == "How common is KBG syndrome?"


# --- the user-documents dev set's conversations (benchmarks/devsets/userdocs) ------------------


def test_a_bare_question_is_a_follow_up() -> None:
    history = said(("Can I carry annual leave over?", "Up to 5 days [1]."))
    assert is_follow_up("Until when?", history)
    assert reformulate("Until when?", history) == "Until when annual leave?"


def test_what_about_swaps_into_the_question_as_it_was_searched() -> None:
    history = said(
        ("Can I take amoxicillin if I'm allergic to penicillin?", "No [1]."),
        ("Does it interact with the contraceptive pill?", "It is unlikely to [1]."),
    )
    assert reformulate("What about warfarin?", history) == (
        "Does amoxicillin interact with the warfarin?"
    )


def test_they_who_decide_are_people_not_the_topic() -> None:
    history = said(("How much was the water bill?", "£312 [1]."))
    assert reformulate("What did they decide to do about it?", history) == (
        "What did they decide to do about water bill?"
    )


def test_they_after_a_question_about_people_are_those_people() -> None:
    history = said(
        ("What's the usual adult dose of amoxicillin?", "500 mg three times a day [1]."),
        ("And for children?", "It depends on weight [1]."),
    )
    # what is asked about them is what the last question asked: the dose, not just the drug
    assert reformulate("What's the most they can have?", history) == (
        "What's the most children can have (usual dose of amoxicillin)?"
    )


def test_which_ones_are_of_the_aspect_just_asked_about() -> None:
    history = said(("What are the side effects of amoxicillin?", "Diarrhoea, rash [1]."))
    assert reformulate("Which ones mean I should stop taking it?", history) == (
        "Which side effects of amoxicillin mean I should stop taking amoxicillin?"
    )


def test_an_error_code_is_the_subject() -> None:
    history = said(
        ("My washing machine is showing F05. What does it mean?", "F05: drain pump blocked [1].")
    )
    assert conversation_topic(history) == "F05"
    assert subject("How much can I accept as a gift from a client?") != "accept"


def test_a_what_about_with_its_own_question_is_that_question() -> None:
    history = said(("What does amylase break down?", "Starch [1]."))
    assert reformulate("And what about pepsin, what pH does it like?", history) == (
        "pepsin, what pH does it like?"
    )


def test_she_is_the_users_own_person_when_the_answer_names_nobody() -> None:
    """ "Ibuprofen is suitable…" starts a sentence with a capital: it is not a person."""
    history = said(
        ("My daughter has a fever, what can I give?", "Ibuprofen is suitable for children [1].")
    )
    assert reformulate("Can she have it with milk?", history).startswith("Can my daughter have")
    manager = said(
        ("My line manager says I'll lose my unused leave.", "Up to 5 days carry over [1].")
    )
    assert reformulate("Can she refuse?", manager) == "Can my line manager refuse?"


def test_and_with_a_bare_name_asks_the_previous_question_about_it() -> None:
    """ "And E5?" is "what about E5?": the previous question with its subject swapped (a code
    for the code, its noun kept), not "E2 E5?"; "and for children?" still narrows the topic."""
    codes = said(("What does error E2 mean?", "The cartridge is not seated [1]."))
    assert reformulate("And E5?", codes) == "What does error E5 mean?"
    assert reformulate("What about E5?", codes) == "What does error E5 mean?"
    doses = said(("What is the maximum dose of paracetamol?", "4 g in 24 hours [1]."))
    assert reformulate("and ibuprofen?", doses) == "What is the maximum dose of ibuprofen?"
    assert reformulate("and for children?", doses) == "paracetamol for children?"
    assert reformulate("and side effects?", doses) == "paracetamol side effects?"


# --- what the last answer said, second pass (issue 25) ----------------------------------------


def test_those_are_the_things_the_last_answer_brought_up() -> None:
    """Searched as "Should I throw first wash away?" before: "those" took the question's
    topic, not the bolts the answer had just named."""
    history = said(
        (
            "Do I need to do anything before the first wash?",
            "Before the first wash, remove the three transport bolts from the back [1].",
        )
    )
    assert reformulate("Should I throw those away?", history) == (
        "Should I throw transport bolts away?"
    )
    # an answer that names nothing plural leaves "those" to the topic
    single = said(("Do I need to do anything before the first wash?", "Run it empty [1]."))
    assert reformulate("Should I throw those away?", single) == "Should I throw first wash away?"
    # a refusal brought nothing up
    refused = [
        HistoryMessage("user", "Do I need to do anything before the first wash?"),
        HistoryMessage("assistant", "Remove the transport bolts. The documents don't say."),
    ]
    assert "transport bolts" not in reformulate("Should I throw those away?", refused)


def test_more_than_that_is_the_amount_the_last_answer_gave() -> None:
    """Searched as "What if client is worth more than client?" before."""
    history = said(
        (
            "How much can I accept as a gift from a client?",
            "You may accept gifts worth up to £50 from a client or supplier [1].",
        )
    )
    assert reformulate("What if it's worth more than that?", history) == (
        "What if gift is worth more than £50?"
    )
    assert reformulate("Can I go over that?", history) == "Can I go over £50?"
    hours = said(("How early can I start?", "You may start as early as 07:30 [1]."))
    assert reformulate("Can I start earlier than that?", hours) == (
        "Can I start earlier than 07:30?"
    )
    # no amount in the answer: the comparison alone, not "more than gift"
    vague = said(("How much can I accept as a gift from a client?", "A small amount [1]."))
    assert reformulate("What if it's worth more than that?", vague) == (
        "What if gift is worth more?"
    )


def test_what_a_message_is_about_is_its_object_before_its_modifier() -> None:
    """Two one-word runs ("gift", "client"): the first is what is asked about."""
    history = said(("How much can I accept as a gift from a client?", "Up to £50 [1]."))
    assert conversation_topic(history) == "gift"
    assert subject("How much can I accept as a gift from a client?") == "gift"


def test_what_about_a_value_after_a_yes_no_question_is_a_question_of_its_own() -> None:
    """A yes/no question cannot take a value in: it was searched as "Should I throw first wash
    drain hose height?"."""
    history = said(
        ("Do I need to do anything before the first wash?", "Remove the bolts [1]."),
        ("Should I throw those away?", "Keep the bolts [1]."),
    )
    assert reformulate("What about the drain hose height?", history) == (
        "What is the drain hose height?"
    )
    assert conversation_topic(
        [*history, *said(("What about the drain hose height?", "60 cm"))]
    ) == ("drain hose height")
    # after a question that asks for a value, "what about" still swaps into it
    caps = said(("What's the hotel cap in London?", "£180 a night [1]."))
    assert reformulate("What about the meal limit?", caps) == "What's the meal limit in London?"
    # and a thing (not a value) still swaps into a yes/no question
    pill = said(("Can I take amoxicillin with the contraceptive pill?", "Yes [1]."))
    assert reformulate("What about warfarin?", pill) == "Can I take amoxicillin with the warfarin?"


def test_and_for_another_group_asks_the_previous_question_for_that_group() -> None:
    """Searched as "amoxicillin for children?" before: the dose was lost."""
    history = said(("What's the usual adult dose of amoxicillin?", "250 mg to 500 mg [1]."))
    assert reformulate("And for children?", history) == (
        "What's the usual dose of amoxicillin for children?"
    )
    assert reformulate("What about for kids?", history) == (
        "What's the usual dose of amoxicillin for kids?"
    )
    safe = said(("Is ibuprofen safe for adults?", "Yes, at the lowest dose [1]."))
    assert reformulate("And for children?", safe) == "Is ibuprofen safe for children?"


MEALS = said(
    (
        "How much can I claim for dinner on a UK trip?",
        "Meal: Dinner; UK limit: £35; International limit: £45 [1].",
    )
)
CAPS = said(("What's the hotel cap in London?", "City: London; Maximum per night: 180 [1]."))


@pytest.mark.parametrize(
    ("history", "message", "expected"),
    [
        # a phrase after a preposition takes the place of the one after the same preposition
        (CAPS, "And in Paris?", "What's the hotel cap in Paris?"),
        (CAPS, "What about in Tokyo?", "What's the hotel cap in Tokyo?"),
        (MEALS, "What about for lunch?", "How much can I claim for lunch on a UK trip?"),
        # a place for a place, a common noun for a common noun
        (CAPS, "What about Paris?", "What's the hotel cap in Paris?"),
        (CAPS, "And New York?", "What's the hotel cap in New York?"),
        (MEALS, "And breakfast?", "How much can I claim for breakfast on a UK trip?"),
        (MEALS, "What about lunch?", "How much can I claim for lunch on a UK trip?"),
    ],
)
def test_what_about_x_replaces_the_part_of_the_question_x_stands_for(
    history: list[HistoryMessage], message: str, expected: str
) -> None:
    """ "What about Paris?" was searched as "What's the Paris in London?", "What about lunch?"
    as "How much can I claim for dinner on a lunch?"."""
    assert reformulate(message, history) == expected


def test_the_topic_is_never_swapped_out_for_a_group() -> None:
    history = said(("What are the treatments for psoriasis?", "Creams and light therapy [1]."))
    assert "psoriasis" in reformulate("And for children?", history)


def test_it_is_the_row_a_table_answer_quoted() -> None:
    """A which/what-thing question answered by a table row: "it" is the row's first cell
    ("Quick" alone before: the number was cut off; "enzyme digests fats" for "Lipase")."""
    quick = said(
        (
            "Which programme is the quickest?",
            "Programme: Quick 30; Temperature: 30 C; Max load: 3 kg; Time: 30 min [1].",
        )
    )
    assert reformulate("How hot does it get?", quick) == "How hot does Quick 30 get?"
    enzyme = said(
        ("What enzyme digests fats?", "Enzyme: Lipase; Made in: pancreas; Breaks down: lipids [1].")
    )
    assert reformulate("Where is it made?", enzyme) == "Where is Lipase made?"
    # a row about what the question already named leaves "it" to the topic
    caps = said(("What's the hotel cap in London?", "City: London; Maximum per night: 180 [1]."))
    assert reformulate("What if I need to go over it?", caps) == (
        "What if I need to go over hotel cap?"
    )


def test_and_x_moves_the_conversation_to_x_like_what_about_x() -> None:
    """ "Is there a joining fee for that?" was about the standard plan, two turns back."""
    plans = said(
        ("How much is the standard plan per month?", "Plan: Standard; Monthly fee: £35 [1]."),
        ("And the premium plan?", "Plan: Premium; Monthly fee: £50 [1]."),
    )
    assert conversation_topic(plans) == "premium plan"
    assert reformulate("Is there a joining fee for that?", plans) == (
        "Is there a joining fee for premium plan?"
    )


def test_what_about_a_qualifier_narrows_the_question_and_keeps_its_subject() -> None:
    """ "What about for students?" was searched as "How much is the students?"."""
    history = said(("How much is the off-peak plan?", "Plan: Off-peak; Monthly fee: £25 [1]."))
    assert reformulate("What about for students?", history) == (
        "How much is the off-peak plan for students?"
    )
    after = [*history, *said(("What about for students?", "20% off [1]."))]
    assert conversation_topic(after) == "off-peak plan"
    abroad = said(("How much can I claim for dinner on a UK trip?", "£35 [1]."))
    assert conversation_topic([*abroad, *said(("What about when I'm abroad?", "£45 [1]."))]) == (
        "UK trip"
    )


def test_a_labelled_sentence_is_not_a_table_row() -> None:
    history = said(
        (
            "What complications can it lead to?",
            "Summary: KBG syndrome is a rare disorder that affects several parts of the body [1].",
        )
    )
    assert "Summary" not in reformulate(
        "How common is it?", [*conv("What is KBG syndrome?"), *history]
    )


def test_it_after_a_verb_is_what_the_last_answer_did_that_verb_to() -> None:
    """ "How long do I hold it for?" was searched as "… hold router for?"."""
    history = said(
        (
            "How do I reset the router?",
            "Press and hold the reset button with a paperclip for 15 seconds [1].",
        )
    )
    assert reformulate("How long do I hold it for?", history) == (
        "How long do I hold reset button for?"
    )
    warranty = said(
        ("How long is the warranty?", "Register within 28 days to extend the parts warranty [1].")
    )
    assert reformulate("Can I extend it?", warranty) == "Can I extend parts warranty?"
    # a verb every answer uses ("take it") or one the answer never used: "it" is the topic
    assert reformulate("Can I take it with food?", IBU) == "Can I take ibuprofen with food?"
    assert reformulate("Can I split it?", warranty) == "Can I split warranty?"


def test_do_it_is_the_action_the_user_asked_about() -> None:
    """ "How do I do it?" was searched as "How do I do membership?"."""
    history = said(
        ("Can I freeze my membership?", "For up to 3 months in any 12 months [1]."),
        ("Does it cost anything?", "A frozen membership costs £5 a month [1]."),
    )
    assert reformulate("How do I do it?", history) == "How do I freeze my membership?"
    filters = said(("How do I clean the drain filter?", "Turn it anticlockwise [1]."))
    assert reformulate("How often should I do that?", filters) == (
        "How often should I clean the drain filter?"
    )
    # a question about no action of the user's: "do it" stays for the topic to complete
    leave = said(("What's the training budget?", "£1,000 a year [1]."))
    assert "training budget" in reformulate("How do I do it?", leave)


def test_an_amount_is_not_what_a_verb_acted_on() -> None:
    history = said(
        ("What's the mileage rate?", "You can claim 45p per mile for the first 10,000 miles [1].")
    )
    assert reformulate("And how do I claim it?", history) == "And how do I claim mileage rate?"


WINTER = conv("Do I need mudguards in winter?", "why?")


@pytest.mark.parametrize(
    "message",
    [
        "Is the ride on if it's icy?",
        "Is the ride still on if it is raining?",
        "Do we still go if it gets dark?",
    ],
)
def test_an_it_that_points_at_nothing_is_left_alone(message: str) -> None:
    """The weather's "it" is not the mudguards: the message is a question of its own."""
    assert reformulate(message, WINTER) == message


def test_an_it_that_points_back_is_still_resolved() -> None:
    assert reformulate("Is it waterproof?", WINTER) == "Is mudguards waterproof?"


def test_a_column_label_of_a_quoted_row_is_not_a_person() -> None:
    history = said(
        ("Who got elected chair?", "Role: Chair; Elected: Rosalind Achebe; Notes: Unopposed [1].")
    )
    assert reformulate("And how long will she serve now?", history) == (
        "And how long will Rosalind Achebe serve now?"
    )


def test_she_is_the_person_the_user_just_asked_about() -> None:
    """The answer's capitalised "Owner" is a role; the user's mum is who "her" means."""
    history = said(
        (
            "I want to share the cameras with my mum, how?",
            "The person who created the home is its Owner [1]. Invite other people [1].",
        )
    )
    assert reformulate("if I make her a family member can she watch recordings?", history) == (
        "if I make my mum a family member can my mum watch recordings?"
    )


def test_the_users_relation_must_fit_the_pronoun() -> None:
    history = said(
        ("Can my son join the club?", "Children join with a parent; ask Sarah Lee to book [1].")
    )
    assert reformulate("What's her number?", history) == "What's Sarah Lee's number?"
    assert reformulate("Does he need boots?", history) == "Does my son need boots?"


def test_a_condition_follow_up_is_the_last_question_under_that_condition() -> None:
    history = said(("how much is the sub going up by", "Per year: £150; Per term: £55 [1]."))
    assert reformulate("and if I pay termly instead?", history) == (
        "how much is the sub going up by if I pay termly instead?"
    )


def test_a_question_word_contraction_is_not_the_topic() -> None:
    history = said(("when's the fair?", "Saturday 28 June, on the school field [1]."))
    assert reformulate("and what time can we start setting up?", history) == (
        "What time can we start setting up for fair?"
    )


def test_a_title_alone_or_a_number_word_is_not_a_person() -> None:
    barretts = said(("who sent apologies?", "Apologies from Mr and Mrs Barrett in flat 31 [1]."))
    assert reformulate("what flat is she in", barretts) == "what flat is Mrs Barrett in?"
    spray = said(
        ("how many sprays for a child?", "Children 6 to 11 years (if advised) One spray [1].")
    )
    assert "One" not in reformulate("how tall does she need to be?", spray)
