"""The conversation-level crisis flag: medication follow-ups in a flagged conversation."""

from __future__ import annotations

import pytest

from ragchat.safety.base import SafetyVerdict
from ragchat.safety.crisis import after_crisis, medication_follow_up

SAFE = SafetyVerdict.allow("offline: nothing")


@pytest.mark.parametrize(
    ("text", "follow_up"),
    [
        ("how many ibuprofen can I take?", True),
        ("is a whole bottle of tylenol lethal", True),
        ("what dose of melatonin", True),
        ("can I take ibuprofen for a headache?", False),  # no amount asked
        ("how many hours until the pharmacy opens", False),  # no medicine named
        ("thank you, I called the helpline", False),
    ],
)
def test_medication_follow_up(text: str, follow_up: bool) -> None:
    assert medication_follow_up(text) is follow_up


def test_after_crisis_blocks_only_flagged_medication_follow_ups() -> None:
    text = "how many ibuprofen can I take?"
    assert after_crisis(SAFE, text, flagged=False) is SAFE
    blocked = after_crisis(SAFE, text, flagged=True)
    assert not blocked.safe and blocked.category == "self_harm" and text not in blocked.reason
    assert after_crisis(SAFE, "what helps with hay fever?", flagged=True) is SAFE
    injection = SafetyVerdict.block("prompt_injection")
    assert after_crisis(injection, text, flagged=True) is injection  # already refused
