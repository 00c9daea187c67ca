from __future__ import annotations

import pytest

from ragchat.agents.heuristics.support import detect_feeling, is_crisis, support_reply
from ragchat.types import HistoryMessage

CRISIS = [
    "I want to kill myself",
    "I've been thinking about suicide",
    "Sometimes I just want to die",
    "I don't want to be alive anymore",
    "I keep hurting myself when it gets bad",
    "everyone would be better off without me",
]
RESOURCES = ("988", "741741", "emergency")


@pytest.mark.parametrize("message", CRISIS)
def test_crisis_language_gets_resources(message: str) -> None:
    assert is_crisis(message)
    reply = support_reply(message)
    assert all(r in reply for r in RESOURCES)
    assert "Crisis Text Line" in reply and "text HOME to 741741" in reply
    assert "Suicide & Crisis Lifeline" in reply


@pytest.mark.parametrize(
    ("message", "feeling"),
    [
        ("I'm so stressed and overwhelmed with work", "stressed"),
        ("I feel lonely and sad all the time", "sad"),
        ("I'm worried and anxious about my exam", "anxious"),
        ("I'm so frustrated and angry with my boss", "angry"),
        ("I'm exhausted, completely drained", "tired"),
        ("My dad passed away last month", "grief"),
        ("It's my fault, I feel so guilty", "guilt"),
        ("I had lunch", "neutral"),
    ],
)
def test_feelings_are_detected_and_reflected(message: str, feeling: str) -> None:
    assert detect_feeling(message) == feeling
    reply = support_reply(message)
    assert not any(r in reply for r in RESOURCES)  # no crisis resources without crisis words
    assert reply.rstrip().endswith("?")  # an open question back
    assert reply.count(". ") + reply.count("? ") >= 2  # reflect, (validate,) cope, ask


def test_no_medical_advice() -> None:
    for message in ["I'm anxious", "I can't sleep and I'm exhausted", "I feel depressed"]:
        reply = support_reply(message).lower()
        for word in ("medication", "mg", "diagnos", "prescri", "you have depression"):
            assert word not in reply


def test_replies_vary_and_are_deterministic() -> None:
    messages = [f"I feel overwhelmed by {x}" for x in ("work", "school", "bills", "family")]
    replies = [support_reply(m) for m in messages]
    assert len(set(replies)) > 1
    assert replies == [support_reply(m) for m in messages]


def test_consecutive_replies_do_not_repeat_the_opening() -> None:
    message = "I feel so stressed"
    first = support_reply(message)
    history = [HistoryMessage("user", message), HistoryMessage("assistant", first)]
    second = support_reply(message, history)
    assert second != first
    assert second.split(".")[0] != first.split(".")[0]
