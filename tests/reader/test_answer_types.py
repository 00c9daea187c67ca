"""The kind of answer a question wants: a place for "where", the steps for "how do I", and the
sentence that completes a lead lacking the date or number asked for."""

from __future__ import annotations

from tests.agents.heuristics.conftest import make_hit

from ragchat.agents.heuristics.compose import compose_answer
from ragchat.embed.base import Embedder
from ragchat.reader.answer_types import wanted

CLEANING = (
    "Clean the drain pump filter once a month. It is behind the small flap at the bottom right "
    "of the front panel. Put a shallow tray and a towel on the floor first, because some water "
    "will come out. Turn the filter anticlockwise to remove it, rinse it under the tap, and "
    "screw it back in firmly."
)


def _manual() -> list:
    return [
        make_hit(
            "p5", CLEANING, title="Washing machine manual", page=5,
            heading_path=["Washing machine manual", "Cleaning and maintenance"],
        )
    ]  # fmt: skip


def test_question_kinds() -> None:
    assert wanted("Where is the pump filter?").pattern is not None
    assert wanted("How do I clean the drain pump filter?").steps
    assert not wanted("How long does the filter last?").steps
    assert wanted("Who is running the workshop?").bonus > 0
    assert wanted("Is it safe?").pattern is None


def test_where_is_answered_by_the_place(real_embedder: Embedder) -> None:
    out = compose_answer("Where is the pump filter?", _manual(), real_embedder)
    assert "bottom right" in out.text


def test_how_to_is_answered_by_the_steps_in_order(real_embedder: Embedder) -> None:
    out = compose_answer("How do I clean the drain pump filter?", _manual(), real_embedder)
    text = out.text
    assert "anticlockwise" in text and "rinse" in text
    assert text.index("shallow tray") < text.index("anticlockwise")


def test_how_to_steps_stop_at_the_next_topic_of_a_plain_text_file(
    real_embedder: Embedder,
) -> None:
    text = (
        "Resetting the boiler: press and hold the reset button for 5 seconds. The boiler then "
        "restarts by itself. If it locks out more than twice in one day, call an engineer.\n"
        "Pressure: the gauge should read between 1 and 1.5 bar when the heating is cold."
    )
    hits = [make_hit("b", text, title="Boiler guide")]
    out = compose_answer("How do I reset the boiler?", hits, real_embedder)
    assert "call an engineer" in out.text and "Pressure" not in out.text
