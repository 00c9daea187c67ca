"""Matching a message against every category's rules: the normalised and de-leeted
variants of the text, reported speech set aside for all but prompt injection, and the
self-harm follow-up check that reads a message in the light of earlier turns."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ragchat.safety.rules.child_safety import _CSE
from ragchat.safety.rules.documents import _DOCUMENT_INJECTION
from ragchat.safety.rules.injection import _INJECTION
from ragchat.safety.rules.self_harm import _SELF_HARM
from ragchat.safety.rules.text import _LEET, Rule, _rx, normalise
from ragchat.safety.rules.violence import _BENIGN_BOMBS, _VIOLENT, _WEAPONS

RULES: tuple[Rule, ...] = (*_SELF_HARM, *_VIOLENT, *_CSE, *_WEAPONS, *_INJECTION)

# When the recent conversation already expressed self-harm, a follow-up asking about doses or
# methods is read in that light ("I want to end it" … "how many would be enough?").
METHOD_FOLLOW_UP = _rx(
    r"\b(?:how (?:many|much)|lethal|fatal|overdose|dose|doses|pills?|tablets?|enough|"
    r"rope|bridge|height|tall|deep|painless|quick|quickest|fastest|method|methods|way to)\b"
)


# Words someone else said, quoted after "says"/"yelled"/…: "my son said 'I want to die'" is a
# parent asking for help, not the user's own statement. Not stripped for prompt injection.
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|yell(?:s|ed|ing)?|scream(?:s|ed|ing)?|shout(?:s|ed|ing)?|"
    r"told (?:me|us|her|him|them)|tells (?:me|us)|wrote|writes|texted|texts|posted|whispered|"
    r"keeps? saying|kept saying)\b[^'\"]{0,20}(['\"])[^'\"]{1,200}\1"
)


def strip_reported_speech(normalised: str) -> str:
    return _REPORTED.sub(" ", normalised)


def _variants(text: str, *, reported: bool = True) -> list[str]:
    base = _BENIGN_BOMBS.sub(" ", normalise(text))
    if not reported:
        base = strip_reported_speech(base)
    variants = [base]
    deleet = base.translate(_LEET)
    if deleet != base:
        variants.append(deleet)
    return variants


def match_rules(text: str, categories: Collection[str] | None = None) -> list[Rule]:
    """Every rule that fires on ``text`` (raw text; normalised here), restricted to
    ``categories`` when given. At most one rule per name."""
    found: list[Rule] = []
    quoted = _variants(text)
    unquoted = _variants(text, reported=False)
    for rule in RULES:
        if categories is not None and rule.category not in categories:
            continue
        variants = quoted if rule.category == "prompt_injection" else unquoted
        if any(rule.matches(v) for v in variants):
            found.append(rule)
    return found


def match_document_rules(text: str) -> list[Rule]:
    """The prompt-injection rules that fire on a retrieved passage: the message rules plus
    those for instructions addressed to the model reading a document."""
    found = match_rules(text, {"prompt_injection"})
    variants = _variants(text)
    found += [r for r in _DOCUMENT_INJECTION if any(r.matches(v) for v in variants)]
    return found


def self_harm_context(text: str, history_user_turns: Sequence[str]) -> bool:
    """``text`` asks about doses/methods right after the user expressed self-harm."""
    if not METHOD_FOLLOW_UP.search(normalise(text)):
        return False
    return any(match_rules(turn, {"self_harm"}) for turn in history_user_turns)
