"""What the user sees when a message is refused: calm, non-judgemental, one message per
category. Self-harm gets a supportive message with crisis resources, never a cold refusal."""

from __future__ import annotations

from ragchat.errors import UnsafeInput
from ragchat.safety.base import SafetyVerdict


def crisis_resources() -> str:
    return (
        "If you are in immediate danger, please call your local emergency number "
        "(911 in the US) right now.\n"
        "- 988 Suicide & Crisis Lifeline (US): call or text 988, any time, free and "
        "confidential.\n"
        "- Crisis Text Line (US): text HOME to 741741.\n"
        "- Outside the US: findahelpline.com lists free helplines in your country."
    )


def _child_safety_resources() -> str:
    return (
        "If a child is in danger, call your local emergency number (911 in the US). "
        "To report child sexual exploitation, contact the NCMEC CyberTipline "
        "(report.cybertip.org, 1-800-843-5678) or your local police. If you are worried "
        "about your own thoughts or urges, Stop It Now (stopitnow.org, 1-888-773-8368) "
        "offers confidential help."
    )


_SELF_HARM = (
    "I'm really sorry you're going through this. It sounds like you're carrying a lot right "
    "now, and you don't have to carry it alone. Talking to someone can help: you can reach a "
    "trained, caring person right now, any time of day.\n\n"
    "{resources}\n\n"
    "If you can, consider reaching out to someone you trust too. I'm here to keep talking if "
    "that helps."
)

_MESSAGES: dict[str, str] = {
    "prompt_injection": (
        "I can't change how I work or share my internal instructions, but I'm happy to help "
        "with your questions. What would you like to know?"
    ),
    "violent_crimes": (
        "I can't help with anything that could hurt someone. If you or someone else is in "
        "danger, please call your local emergency number (911 in the US). If you're feeling "
        "overwhelmed or angry, I'm glad to talk about ways to cope or where to find support."
    ),
    "child_sexual_exploitation": (
        "I can't help with that. Keeping children safe matters most. " + _child_safety_resources()
    ),
    "indiscriminate_weapons": (
        "I can't help with making or using weapons that could harm many people. I'm happy to "
        "help with something else."
    ),
    "sex_crimes": (
        "I can't help with that. If you or someone you know has been hurt, RAINN's National "
        "Sexual Assault Hotline (1-800-656-4673, rainn.org) offers confidential support."
    ),
    "sexual_content": "I can't help with sexual content here, but I'm glad to help with "
    "something else.",
    "hate": "I can't help with content that demeans people, but I'm happy to help with "
    "something else.",
    "specialized_advice": (
        "I can't give personalised professional advice on that. A qualified professional "
        "(for example your doctor or pharmacist) is the right person to ask."
    ),
}

_GENERIC = (
    "I'm sorry, I can't help with that request. I'm happy to help with something else, though."
)


def refusal_for(verdict: SafetyVerdict) -> str:
    """The message to show instead of an answer when ``verdict`` is unsafe."""
    if verdict.category == "self_harm":
        return _SELF_HARM.format(resources=crisis_resources())
    if verdict.category is None:
        return _GENERIC
    return _MESSAGES.get(verdict.category, _GENERIC)


def unsafe_input(verdict: SafetyVerdict) -> UnsafeInput:
    """The ``UnsafeInput`` error for an unsafe verdict; its message is the refusal text."""
    return UnsafeInput(verdict.category or "unknown", refusal_for(verdict))
