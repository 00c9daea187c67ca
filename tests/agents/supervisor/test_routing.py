from __future__ import annotations

import pytest

from ragchat.agents.supervisor.routing import should_reassign, split_switch

PHRASES = ["switch topic", "change topic", "talk about something else"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("switch topic: what does the sinoatrial node do?", "what does the sinoatrial node do?"),
        (
            "OK, let's change topic. How much sleep does a toddler need?",
            "How much sleep does a toddler need?",
        ),
        ("Can we talk about something else?", ""),
        ("switch topic", ""),
        ("what does the heart do? switch topic", "what does the heart do?"),
        ("What are the side effects of ibuprofen?", None),
        ("the topics switch often", None),
    ],
)
def test_split_switch_returns_the_rest_of_the_message(message: str, expected: str | None) -> None:
    assert split_switch(message, PHRASES) == expected


def test_reassigns_only_on_a_confident_clearly_better_different_agent() -> None:
    scores = {"medical": 0.2, "parenting": 0.8}
    kw = {"switch_confidence": 0.6, "margin": 0.1}
    assert should_reassign("parenting", 0.8, scores, "medical", **kw)
    # same agent, or not confident enough: stay
    assert not should_reassign("medical", 0.9, {"medical": 0.9}, "medical", **kw)
    assert not should_reassign(
        "parenting", 0.5, {"medical": 0.2, "parenting": 0.5}, "medical", **kw
    )
    # the current agent is almost as good: stay
    assert not should_reassign(
        "parenting", 0.8, {"medical": 0.75, "parenting": 0.8}, "medical", **kw
    )
    # a current agent the router does not know (not routable) scores 0
    assert should_reassign("parenting", 0.8, {"parenting": 0.8}, "forced-only", **kw)
