"""What kind of answer a question wants, and the sentences that complete a lead without it.

"How much / how many / what dose" questions are answered by sentences with numbers in them,
"when" by a date or a time, "who" by a name (a capitalised word inside the sentence), "where"
by a place ("behind the small flap at the bottom right"): such sentences gain a bonus. When the
lead still lacks it and one of the next ``REACH`` sentences of the same passage has it, that
sentence follows the lead (a speaker's answer runs on; a manual says what, then where). A
"how do I …" question is answered by the steps: the sentences after the lead in its section,
in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragchat.reader.candidates import Candidate
from ragchat.retrieve.terms import NUMBER_WORD_PATTERN

NUMERIC_BONUS = 0.08
ENTITY_BONUS = 0.15
REACH = 2  # sentences after the lead searched for what it lacks
STEPS = 3  # sentences after the lead quoted for a how-to question

_QUANTITY = re.compile(
    r"\b(how (much|many|long|often|old)|dose|dosage|maximum|minimum|limit|amount|number of)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(rf"\d|\b({NUMBER_WORD_PATTERN})\b", re.IGNORECASE)
_WHEN = re.compile(r"^\s*(?:and\s+)?(?:when|what time|what date|by when|until when)\b", re.I)
_DATE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sep(?:tember)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|tomorrow|noon|midnight|\d{1,2}:\d\d|\d{1,2}\s?(?:am|pm)"
    r"|\w+(?:first|second|third|[^s]th)\s+of\s+\w+|\d{1,2}(?:st|nd|rd|th))\b",
    re.IGNORECASE,
)
_WHO = re.compile(r"^\s*(?:and\s+)?who(?:'s| is| was| will)?\b", re.IGNORECASE)
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)?")
_WHERE = re.compile(r"^\s*(?:and\s+)?where(?:'s| is| are| does| do| can| should)?\b", re.I)
_PLACE = re.compile(
    r"\b(?:behind|under|underneath|beneath|below|above|inside|outside|next to|beside|near"
    r"|opposite|at the (?:bottom|top|back|front|side|end)|on the (?:left|right|back|front|side)"
    r"|in the (?:\w+ )?(?:room|hall|building|office|cupboard|drawer|matrix|cytoplasm|"
    r"mitochondria|nucleus|stomach|intestine|liver)|takes? place in|located|found in)\b",
    re.IGNORECASE,
)
_OPENER = re.compile(r"^[A-Z][\w'’ -]{0,30}:\s")
_HOW_TO = re.compile(
    r"^\s*(?:and\s+)?(?:how (?:do|can|should|would|shall) (?:i|you|we)|how to)\b", re.I
)


@dataclass(frozen=True)
class Wanted:
    """What a sentence answering the question holds (None: anything), its score bonus, and
    whether the steps after the lead are quoted too."""

    pattern: re.Pattern[str] | None = None
    bonus: float = 0.0
    steps: bool = False

    def holds(self, text: str) -> bool:
        """``text`` holds the kind of value asked for (never, when no kind is asked for)."""
        return self.pattern is not None and self.pattern.search(text) is not None


def wanted(query: str) -> Wanted:
    if _WHEN.search(query):
        return Wanted(_DATE, ENTITY_BONUS)
    if _WHO.search(query):
        return Wanted(_NAME, ENTITY_BONUS)
    if _WHERE.search(query):
        return Wanted(_PLACE, ENTITY_BONUS)
    if _HOW_TO.search(query):
        return Wanted(steps=True)
    if _QUANTITY.search(query):
        return Wanted(_NUMBER, NUMERIC_BONUS)
    return Wanted()


def completion(
    cands: Sequence[Candidate], plain: Sequence[str], lead: int, want: Wanted
) -> list[int]:
    """The sentences that follow the lead in the answer (module docstring), in order."""
    c = cands[lead]
    after = sorted(
        (
            i
            for i, other in enumerate(cands)
            if other.hit_rank == c.hit_rank and 0 < other.order - c.order <= max(REACH, STEPS)
        ),
        key=lambda i: cands[i].order,
    )
    if want.steps:  # the steps of the lead's own section
        steps: list[int] = []
        for i in after:
            if cands[i].heading != c.heading or _OPENER.match(plain[i]):
                break  # the next section, or a plain-text document's next "Label: …" topic
            steps.append(i)
        return steps[:STEPS]
    if want.pattern is None or want.pattern.search(plain[lead]):
        return []
    near = [i for i in after if cands[i].order - c.order <= REACH]
    return next(([i] for i in near if want.pattern.search(plain[i])), [])
