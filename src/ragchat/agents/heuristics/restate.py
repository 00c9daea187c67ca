"""A follow-up that asks the previous question again with one part changed, restated as a whole
question (used by ``reformulate``):

- "And for children?" after "What's the usual adult dose of amoxicillin?" asks the same
  question for another group of people: "What's the usual dose of amoxicillin for
  children?" (``for_group``), not "amoxicillin for children?", which loses the dose;
- "What about the drain hose height?" after a yes/no question ("Should I throw those away?")
  asks for a value, which no yes/no question can take in: it is a question of its own,
  "What is the drain hose height?" (``own_question``), not "Should I throw drain hose height
  away?";
- "What's the most they can have?" after that: "they" are the children, and what is asked
  about them is what the previous question asked (``gist``: "usual dose of amoxicillin");
- "What about in Paris?" / "And in Paris?" put Paris where the previous question had "in
  London" (``same_slot``); "What about Paris?" a place for its place (``proper_slot``);
  "What about for students?" narrows it when it has no "for …" to replace (``qualified``);
- "How do I do it?" asks how to do what the user last asked about doing: "Can I freeze my
  membership?" → "How do I freeze my membership?" (``redo``).

Each returns ``""`` (or the message unchanged) when its pattern does not fit, so the caller
falls back to completing the follow-up with the topic."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ragchat.reader.text import STOPWORDS, words, wordset

# Groups of people a question can be narrowed to, singular and plural.
GROUPS = wordset(
    """adult adults child children kid kids baby babies infant infants toddler toddlers teen
    teens teenager teenagers elderly pensioners women men woman man students staff employees
    managers contractors visitors members beginners"""
)
# Nouns that name a value to look up: a question about one asks "what is it?", not "yes or no".
VALUE_NOUNS = wordset(
    """height length width depth size weight temperature speed capacity colour color ph rate
    rates price prices cost costs fee fees limit limits number address deadline duration
    period allowance budget amount level pressure setting settings distance voltage code
    codes phone email time times date dates hours"""
)
_YES_NO = re.compile(
    r"^\s*(?:and\s+)?(?:should|shall|can|could|do|does|did|is|are|was|were|will|would|may|"
    r"might|must|has|have)\b",
    re.IGNORECASE,
)
_OPENING = wordset(
    """what what's whats how when where which who why is are was were can could should shall
    do does did will would may might must has have much many"""
)


def is_yes_no(question: str) -> bool:
    return _YES_NO.match(question) is not None


_HEAD_END = re.compile(r"\s+(?:for|of|in|on|at|with|from|per)\s+.*$", re.IGNORECASE)


def asks_value(phrase: str) -> bool:
    """Whether a noun phrase names a value: its head noun, the last word before any "for",
    "of"... ("the drain hose height", "the late cancellation fee for classes"), is one."""
    found = words(_HEAD_END.sub("", phrase))
    return len(found) >= 2 and found[-1].lower() in VALUE_NOUNS


def own_question(phrase: str, end: str) -> str:
    """ "the drain hose height" → "What is the drain hose height?"."""
    head = words(_HEAD_END.sub("", phrase))[-1].lower()
    verb = "are" if head.endswith("s") and not head.endswith("ss") else "is"
    return f"What {verb} {phrase}{end}"


def _group_words(text: str) -> list[str]:
    return [w for w in words(text) if w.lower() in GROUPS]


_PREPOSITION = r"(?:for|in|with|to|among|by)"
_AUXILIARY = r"(?:should|can|could|do|does|did|are|is|will|would|may|might|must)"


def for_group(previous: str, rest: str, end: str) -> str:
    """The previous question (as searched) for the group ``rest`` names ("for children") in
    place of its own: "for adults" → "for children", "should adults take" → "should children
    take", "the usual adult dose of X" → "the usual dose of X for children"; ``""`` when
    ``rest`` names no group or the previous question named none (then "and for children?"
    narrows the topic instead)."""
    new, old = _group_words(rest), _group_words(previous)
    if not new or not old or len(words(rest)) > 4:
        return ""
    body = previous.strip().rstrip("?.! ")
    group = re.escape(old[0])
    rest = rest.strip()
    bare = re.sub(rf"^{_PREPOSITION}\s+", "", rest, flags=re.IGNORECASE)
    swaps: tuple[tuple[str, Callable[[re.Match[str]], str]], ...] = (
        (rf"\b{_PREPOSITION}\s+(?:the\s+)?{group}\b", lambda m: rest),
        (rf"\b({_AUXILIARY}\s+){group}\b", lambda m: m.group(1) + bare),
    )
    for pattern, by in swaps:
        swapped, n = re.subn(pattern, by, body, count=1, flags=re.IGNORECASE)
        if n:
            return f"{swapped}{end}"
    dropped = re.sub(rf"\s*\b{group}\b", "", body, count=1)
    return f"{dropped} {rest}{end}"


def gist(previous: str, leave_out: str = "") -> str:
    """What a question asks about, without its question words and without ``leave_out``:
    "What's the usual dose of amoxicillin for children?" → "usual dose of amoxicillin"."""
    kept = [
        w
        for w in words(previous)
        if w.lower() != leave_out.lower()
        and w.lower() not in _OPENING
        and w.lower() not in GROUPS
        and (w.lower() not in STOPWORDS or w.lower() == "of")
    ]
    return re.sub(r"^(?:of\s+)+|(?:\s+of)+$", "", " ".join(kept))


_SLOT_PREPOSITION = r"(?:in|for|on|at|with|during|after|before|from|to|near)"
_DETERMINER = r"(?:(?:the|a|an|my|your|our|their)\s+)?"
# What follows a preposition, up to the next preposition, clause or the end: "in London",
# "for dinner" in "for dinner on a UK trip".
_SLOT_END = rf"(?=\s+{_SLOT_PREPOSITION}\b|\s+(?:and|or|if|when)\b|[?.!,;]|$)"


def same_slot(previous: str, rest: str, keep: str) -> str:
    """The previous question (as searched) with the phrase after ``rest``'s preposition put in
    place of the one after the same preposition: "in Paris" into "What's the hotel cap in
    London?" → "What's the hotel cap in Paris?", "for lunch" into "How much can I claim for
    dinner on a UK trip?" → "... for lunch on a UK trip?"; ``""`` when ``rest`` does not start
    with a preposition, the previous question has none to match, or the phrase it would
    replace holds ``keep`` (the conversation's topic: "for ibuprofen" stays)."""
    head = re.match(rf"\s*({_SLOT_PREPOSITION})\s+(?=\w)", rest, re.IGNORECASE)
    if head is None:
        return ""
    prep = head.group(1).lower()
    slot = re.search(
        rf"\b{prep}\s+{_DETERMINER}(?P<phrase>[\w'’-]+(?:\s+[\w'’-]+){{0,3}}?){_SLOT_END}",
        previous,
        re.IGNORECASE,
    )
    if slot is None or (keep and keep.lower() in slot.group(0).lower()):
        return ""
    return f"{previous[: slot.start()]}{rest.strip()}{previous[slot.end() :]}"


_PROPER = re.compile(r"[A-Z][A-Za-z]+(?:\s+[A-Z][A-Za-z]+)*")


def proper_slot(previous: str, name: str) -> str:
    """The previous question with its place or name ("London", not its first word) replaced by
    the place or name ``name`` ("Paris", "New York"); ``""`` when either is not one."""
    if _PROPER.fullmatch(name) is None:
        return ""
    for m in _PROPER.finditer(previous):
        before = previous[: m.start()].rstrip()
        if before and before[-1] not in ".!?":
            return f"{previous[: m.start()]}{name}{previous[m.end() :]}"
    return ""


def qualified(previous: str, rest: str) -> str:
    """The previous question (as searched) narrowed by a phrase that starts with a
    preposition: "for students" after "How much is the off-peak plan?" → "How much is the
    off-peak plan for students?"; ``""`` when ``rest`` does not start with one."""
    if not previous or re.match(rf"\s*{_SLOT_PREPOSITION}\s+\w", rest, re.IGNORECASE) is None:
        return ""
    body = previous.strip()
    end = body[-1] if body[-1:] in ("?", ".", "!") else "?"
    return f"{body.rstrip('?.! ')} {rest.strip()}{end}"


# "How do I do it?", "How often should I do that?": "do it" is the last question's action.
DO_IT = re.compile(
    r"\bdo\s+(?:it|that|this)\b(?=\s*[?.!,]|\s*$|\s+(?:again|myself|online|now)\b)",
    re.IGNORECASE,
)
_ASKED_ACTION = re.compile(
    r"^\s*(?:and\s+)?(?:how|can|could|should|shall|may|when|where|why|do|must)\s+"
    r"(?:(?:do|can|could|should|shall|may|must)\s+)?(?:I|we)\s+"
    r"(?P<action>[a-z][\w'’ -]*?)\s*[?.!]*$",
    re.IGNORECASE,
)
_NOT_ACTIONS = wordset("need have want get do be go know find use take make ask tell see try")


def redo(message: str, earlier: Sequence[str]) -> str:
    """``message`` with "do it" replaced by the action the latest of the ``earlier`` questions
    (newest first) that asked about one of the user's own actions: "How do I do it?" after
    "Can I freeze my membership?" and "Does it cost anything?" → "How do I freeze my
    membership?"; unchanged when none did."""
    found = DO_IT.search(message)
    if found is None:
        return message
    for question in earlier:
        asked = _ASKED_ACTION.match(question)
        if asked is None or words(asked.group("action"))[0].lower() in _NOT_ACTIONS:
            continue
        return f"{message[: found.start()]}{asked.group('action')}{message[found.end() :]}"
    return message
