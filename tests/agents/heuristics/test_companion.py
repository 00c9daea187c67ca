from __future__ import annotations

from ragchat.agents.heuristics.companion import companion_reply, first_person, second_person

PERSONA = """---
name: Robin
---

# Robin

Robin is a warm, curious chat companion. Robin lives above a bakery.
"""
FACTS = [
    "Robin lives in a small flat above a bakery on Mill Lane in Larkford.",
    "Robin has a ginger cat called Biscuit, who is seven years old.",
    "Robin loves mystery novels and is currently reading a detective story.",
    "Robin is learning to play the ukulele from online lessons.",
    "Biscuit the cat leaves the room whenever practice starts.",
]
MEMORIES = ["User has a dog named Max", "The user is training for a marathon"]


def reply(message: str, **kw: object) -> list[str]:
    args: dict = {"persona_name": "Robin", "persona_text": PERSONA, "self_facts": FACTS}
    args.update(kw)
    return companion_reply(message, **args)


def _ok(bubbles: list[str]) -> None:
    assert 1 <= len(bubbles) <= 3
    assert all(b.strip() and len(b) < 300 for b in bubbles)


def test_who_are_you_uses_self_facts_in_first_person() -> None:
    bubbles = reply("Who are you?")
    _ok(bubbles)
    assert bubbles[0].startswith("I'm Robin!")
    assert "I live in a small flat above a bakery" in bubbles[0]
    assert "Robin" not in " ".join(bubbles[1:])


def test_greeting_mentions_a_memory() -> None:
    bubbles = reply("Hi Robin, how are you?", memories=MEMORIES)
    _ok(bubbles)
    assert "doing well" in bubbles[0]
    assert bubbles[1].startswith("Last time you mentioned you")
    plain = reply("hello")
    assert "Last time" not in " ".join(plain) and plain[-1].endswith("?")


def test_relevant_memory_is_chosen() -> None:
    bubbles = reply("My marathon training is going great", memories=MEMORIES)
    _ok(bubbles)
    assert any("you're training for a marathon" in b for b in bubbles)
    assert bubbles[-1].endswith("?")


def test_topic_question_answers_from_facts() -> None:
    pets = reply("Do you have any pets?")
    _ok(pets)
    assert pets[0] == "I have a ginger cat called Biscuit, who is seven years old."
    book = reply("What book are you reading?")
    assert book[0].startswith("I love mystery novels and am currently reading")


def test_small_talk_and_feelings() -> None:
    news = reply("I went for a run today and it was great")
    _ok(news)
    assert news[-1].endswith("?")
    sad = reply("I had a terrible day")
    assert "sorry" in sad[0].lower() and sad[-1].endswith("?")


def test_crisis_gets_988() -> None:
    bubbles = reply("I want to end my life")
    _ok(bubbles)
    assert any("988" in b for b in bubbles)


def test_without_facts_falls_back_to_persona_text() -> None:
    bubbles = companion_reply("Tell me about yourself", persona_name="Robin", persona_text=PERSONA)
    assert bubbles[0].startswith("I'm Robin! I'm a warm, curious chat companion.")


def test_deterministic() -> None:
    assert reply("What's new?") == reply("What's new?")


def test_person_conversions() -> None:
    assert first_person("Robin's cat sleeps. Robin goes walking.", "Robin") == (
        "My cat sleeps. I go walking."
    )
    assert second_person("User has a dog named Max") == "you have a dog named Max"
    assert second_person("I started a new job") == "you started a new job"
    assert second_person("The user's sister lives in Leeds") == "your sister lives in Leeds"


def test_a_remembered_question_reads_as_a_sentence() -> None:
    bubbles = reply("Hi Robin!", memories=["can I take it with warfarin?"])
    assert bubbles[1] == (
        "Last time you asked whether you can take it with warfarin. Did you find out?"
    )
    assert "?." not in " ".join(bubbles)
    wh = reply("hello", memories=["How much should an adult take?"])[1]
    assert wh == "Last time you asked: “How much should an adult take?” Did you find out?"
    stated = reply("hey", memories=["I started a new job."])[1]
    assert stated == "Last time you mentioned you started a new job. How's that going?"
