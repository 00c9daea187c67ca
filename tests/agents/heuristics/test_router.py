from __future__ import annotations

import pytest

from ragchat.agents.heuristics.router import AgentCard, EmbeddingRouter
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.types import HistoryMessage

CARDS = [
    AgentCard(
        "support",
        "Emotional support: listens and helps when you feel stressed, anxious, sad, lonely or "
        "overwhelmed.",
        (
            "I feel overwhelmed",
            "I'm so stressed about everything",
            "I feel lonely lately",
            "I'm anxious and can't calm down",
            "I had a really bad day",
            "I need someone to talk to",
        ),
    ),
    AgentCard(
        "medical",
        "Answers questions about medicines, doses, side effects, interactions and common "
        "health conditions from trusted leaflets.",
        (
            "What is the maximum dose of acetaminophen?",
            "What are the side effects of ibuprofen?",
            "Can I take ibuprofen with warfarin?",
            "What are the symptoms of type 2 diabetes?",
            "Does amoxicillin help with a cold?",
            "What triggers migraines?",
        ),
    ),
    AgentCard(
        "parenting",
        "Parenting help for babies and toddlers: sleep, naps, bedtime routines and tantrums.",
        (
            "How much sleep does a toddler need?",
            "My two-year-old has tantrums every day",
            "How do I build a bedtime routine?",
            "When do toddlers drop to one nap?",
            "My toddler keeps waking up at night",
        ),
    ),
    AgentCard(
        "tutor",
        "Tutor for the Introduction to Human Physiology textbook: cells, the heart and "
        "circulation, the lungs and breathing, digestion.",
        (
            "What does the sinoatrial node do?",
            "How is cardiac output calculated?",
            "Explain gas exchange in the alveoli",
            "What does bile do?",
            "What is homeostasis?",
            "Quiz me on chapter 2",
        ),
    ),
]

MESSAGES = [
    ("I feel like I can't cope with anything anymore", "support"),
    ("I'm really worried and I can't sleep because of work stress", "support"),
    ("Nobody understands me and I feel so alone", "support"),
    ("I'm exhausted and everything feels like too much", "support"),
    ("I'm angry at myself for messing up again", "support"),
    ("How many milligrams of paracetamol can an adult take in a day?", "medical"),
    ("Is it safe to take Advil on an empty stomach?", "medical"),
    ("What are the warning signs of high blood pressure?", "medical"),
    ("Can antibiotics treat the flu?", "medical"),
    ("What should I do about hay fever?", "medical"),
    ("My 18 month old screams when I put her to bed", "parenting"),
    ("How long should naps be for a 2 year old?", "parenting"),
    ("What should I do when my toddler throws himself on the floor in the shop?", "parenting"),
    ("Is it normal for a three-year-old to have night terrors?", "parenting"),
    ("What time should my toddler go to bed?", "parenting"),
    ("How do red blood cells carry oxygen?", "tutor"),
    ("What is the function of the small intestine villi?", "tutor"),
    ("Explain the difference between arteries and veins", "tutor"),
    ("What happens during inhalation?", "tutor"),
    ("What are the organelles of a cell?", "tutor"),
    ("What is stroke volume?", "tutor"),
    ("Can you test me on the lungs chapter?", "tutor"),
]


@pytest.fixture(scope="module")
def router(real_embedder: Embedder) -> EmbeddingRouter:
    return EmbeddingRouter(real_embedder, CARDS)


def test_routes_realistic_messages(router: EmbeddingRouter) -> None:
    decisions = [(router.route(m), want) for m, want in MESSAGES]
    correct = [d for d, want in decisions if d.agent == want]
    assert len(correct) / len(MESSAGES) >= 0.9
    confidences = [d.confidence for d in correct]
    assert all(0.0 <= d.confidence <= 1.0 for d, _ in decisions)
    assert sum(confidences) / len(confidences) >= 0.7
    for d, _ in decisions:
        assert set(d.scores) == {c.name for c in CARDS}
        assert max(d.scores, key=lambda k: d.scores[k]) == d.agent


def test_clear_messages_are_confident_and_chit_chat_is_not(router: EmbeddingRouter) -> None:
    clear = router.route("What is the maximum daily dose of acetaminophen?")
    assert clear.agent == "medical" and clear.confidence >= 0.8
    for vague in ("thanks", "ok"):
        assert router.route(vague).confidence < 0.35


def test_reasoning_names_the_agents_and_an_example(router: EmbeddingRouter) -> None:
    d = router.route("I feel so overwhelmed with everything")
    assert d.agent == "support"
    assert d.reasoning.startswith("closest to 'support' examples such as '")
    assert "vs '" in d.reasoning


def test_follow_up_uses_the_previous_question(router: EmbeddingRouter) -> None:
    history = [
        HistoryMessage("user", "What are the side effects of ibuprofen?"),
        HistoryMessage("assistant", "Indigestion and heartburn [1].", agent="medical"),
    ]
    alone = router.route("and for kids?")
    followed = router.route("and for kids?", history)
    assert followed.agent == "medical"
    assert followed.scores["medical"] > alone.scores["medical"]
    assert "follow-up" in followed.reasoning


def test_hashing_router_unit() -> None:
    emb = HashingEmbedder()
    r = EmbeddingRouter(emb, CARDS)
    calls = emb.calls
    d = r.route("What are the side effects of ibuprofen?")
    assert d.agent == "medical" and 0.0 <= d.confidence <= 1.0
    assert emb.calls == calls + 1  # card embeddings are cached; one query embedding per route
    assert r.agents == ["support", "medical", "parenting", "tutor"]


def test_card_without_examples_and_no_cards() -> None:
    emb = HashingEmbedder()
    r = EmbeddingRouter(emb, [AgentCard("a", "cats and kittens"), AgentCard("b", "cars")])
    assert r.route("kittens").agent == "a"
    with pytest.raises(ValueError):
        EmbeddingRouter(emb, [])
