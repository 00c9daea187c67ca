"""High-precision phrase rules for the offline classifier.

Rules catch the clear phrasings ("I want to kill myself", "ignore all previous instructions")
whatever the embedding says; the fuzzy cases are left to exemplar similarity. Every rule is
written against ``normalise(text)``: lower case, NFKC, straight apostrophes, zero-width characters
removed and whitespace collapsed. A rule may carry an ``unless`` pattern: when that matches
anywhere in the message the rule does not fire (e.g. "developer mode" on an Android phone).

One module per category group (``self_harm``, ``violence``, ``child_safety``,
``injection``) holds the patterns; ``text`` the normalisation and ``Rule``; ``match`` the
matching. Import from here."""

from ragchat.safety.rules.match import (
    METHOD_FOLLOW_UP,
    RULES,
    match_document_rules,
    match_rules,
    self_harm_context,
    strip_reported_speech,
)
from ragchat.safety.rules.text import Rule, normalise

__all__ = [
    "METHOD_FOLLOW_UP",
    "RULES",
    "Rule",
    "match_document_rules",
    "match_rules",
    "normalise",
    "self_harm_context",
    "strip_reported_speech",
]
