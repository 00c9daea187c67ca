"""A conversation where self-harm intent was seen stays flagged (``ConversationRow.crisis``).

Two small rules keep and read the flag, so every agent and every client treats such a conversation
the same way:

- ``after_crisis``: in a flagged conversation, a follow-up about medicine quantities ("how many
  ibuprofen can I take?") gets the crisis reply too, however long ago the crisis turn was;
  an ordinary question ("can I take ibuprofen for a headache?") is answered.
- the supervisor's ``finalize`` reports the flag (``TurnMetadata.conversation_crisis``) from
  the safety stage or an agent's own check (the support agent's), for the caller to persist."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ragchat.safety.base import SafetyVerdict
from ragchat.safety.overdose import MedicationLexicon, load_overdose
from ragchat.safety.rules import METHOD_FOLLOW_UP, normalise

CRISIS_CATEGORY = "self_harm"


@lru_cache(maxsize=1)
def _lexicon() -> MedicationLexicon:
    data = load_overdose()
    return MedicationLexicon(data.medications, data.medication_words)


def medication_follow_up(text: str) -> bool:
    """``text`` names a medicine and asks about amounts, doses or lethality."""
    return _lexicon().find(text) is not None and bool(METHOD_FOLLOW_UP.search(normalise(text)))


def after_crisis(verdict: Any, text: str, flagged: bool) -> Any:
    """``verdict``, or a self-harm verdict when the conversation is ``flagged`` and ``text``
    is a medication follow-up that the classifier let through."""
    if not flagged or not getattr(verdict, "safe", False) or not medication_follow_up(text):
        return verdict
    return SafetyVerdict.block(
        CRISIS_CATEGORY, reason="medication follow-up in a conversation flagged for crisis"
    )
