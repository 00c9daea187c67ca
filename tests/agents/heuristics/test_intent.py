from __future__ import annotations

import pytest

from ragchat.agents.config import TemplateIntent
from ragchat.agents.heuristics.intent import (
    CLARIFICATION,
    INFORMATION,
    IntentClassifier,
    clarifying_question,
    is_vague,
)
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.types import HistoryMessage

TEMPLATES = {
    "find_provider": TemplateIntent(
        description="Find a doctor, pediatrician or clinic nearby",
        examples=[
            "find a doctor near me",
            "where is the nearest clinic",
            "I need a pediatrician in my area",
            "can you recommend a GP nearby",
        ],
        response="Use the provider directory.",
    ),
    "book_appointment": TemplateIntent(
        description="Book, change or cancel an appointment",
        examples=["book an appointment", "I want to reschedule my appointment", "cancel my visit"],
        response="Call the front desk.",
    ),
}


@pytest.fixture(scope="module")
def classifier(real_embedder: Embedder) -> IntentClassifier:
    return IntentClassifier(real_embedder, TEMPLATES)


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("find a pediatrician near me", "find_provider"),
        ("Is there a children's doctor close to where I live?", "find_provider"),
        ("I need to move my appointment to Friday", "book_appointment"),
        ("What does a pediatrician do?", INFORMATION),
        ("What is the maximum dose of acetaminophen?", INFORMATION),
        ("How much sleep does a toddler need?", INFORMATION),
        ("help", CLARIFICATION),
        ("what should I do?", CLARIFICATION),
        ("is it bad?", CLARIFICATION),
        ("side effects?", CLARIFICATION),
        ("hi", CLARIFICATION),
    ],
)
def test_classify(classifier: IntentClassifier, query: str, intent: str) -> None:
    d = classifier.classify(query)
    assert d.intent == intent, d.reasoning
    assert 0.0 <= d.confidence <= 1.0 and d.reasoning


def test_history_can_resolve_a_vague_message(classifier: IntentClassifier) -> None:
    history = [HistoryMessage("user", "What is ibuprofen?"), HistoryMessage("assistant", "…")]
    assert classifier.classify("is it bad?", history).intent == INFORMATION
    assert classifier.classify("side effects?", history).intent == INFORMATION


def test_template_confidence_grows_with_similarity(classifier: IntentClassifier) -> None:
    exact = classifier.classify("find a doctor near me")
    loose = classifier.classify("Is there a children's doctor close to where I live?")
    assert exact.confidence > loose.confidence >= 0.5


def test_without_templates() -> None:
    c = IntentClassifier(HashingEmbedder(), {})
    assert c.classify("What is migraine?").intent == INFORMATION
    assert c.classify("help").intent == CLARIFICATION


def test_is_vague_reasons() -> None:
    assert is_vague("")[0]
    assert "refers to" in is_vague("is that normal?")[1]
    assert not is_vague("What triggers migraine?")[0]


def test_clarifying_question() -> None:
    desc = "Answers questions about medicines, doses and side effects."
    q = clarifying_question("is it bad?", desc)
    assert q.endswith("(I answer questions about medicines, doses and side effects.)")
    assert "“it”" in q and "?" in q
    short = clarifying_question("help", "Parenting help for toddlers")
    assert "tell me a bit more" in short and "parenting help for toddlers" in short
    assert clarifying_question("what should I do about this situation", "").endswith("for?")
