"""The words of a follow-up that point back ("it", "that", "this medicine", "she", "they",
"those ones") and what replaces each kind (``Resolver``): "it" and "that" the thing talked
about, "she" the person just named, "they" the aspect or the people just asked about, "those"
also what the last answer brought up, "more than that" the amount it gave, "hold it" what the
last answer said to hold. What those are is found in ``referents``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragchat.agents.heuristics import referents
from ragchat.reader.text import STOPWORDS, stem, words, wordset
from ragchat.retrieve.terms import IMPERSONAL
from ragchat.types import HistoryMessage

# "it" pointing at nothing ("Is the ride on if it's icy?") is not a pronoun here.
_IMPERSONAL = (
    r"(?!(?:['’]s)?\s+(?:(?:is|was|gets|will\s+be)\s+)?(?:very\s+|really\s+|too\s+|still\s+)?"
    rf"(?:{'|'.join(sorted(IMPERSONAL))})\b)"
)
PRONOUN = re.compile(rf"\b(it's|it’s|its|it|they|them|their|theirs)\b{_IMPERSONAL}", re.IGNORECASE)
DEMONSTRATIVE = re.compile(
    r"\b(?:this|that|these|those)(?:\s+(?:medicine|medication|drug|pill|pills|tablet|tablets|"
    r"condition|illness|disease|one|ones|stuff|thing|treatment|problem))?(?=\s*[?.!,]|\s*$|"
    r"\s+(?:is|are|was|does|do|can|could|will|would|should|has|have|cause|causes|help|helps|"
    r"work|works|affect|affects|mean|means|last|lasts|with|for|at|in|on|safe|okay|ok|"
    r"dangerous|bad|good|normal|true|right|wrong|serious|worse|better|every|each|twice|daily|"
    r"too|if)\b|\s+\w+ed\b)",
    re.IGNORECASE,
)
DET_NOUN = re.compile(
    r"\b(?:this|that|these|those|the same)\s+(?:medicine|medication|drug|pill|pills|tablet|"
    r"tablets|condition|illness|disease|treatment|problem)\b",
    re.IGNORECASE,
)
# "Does that make you drowsy?", "Is this normal?", "Will those affect my pay?": a
# demonstrative as the subject of a question.
DEMONSTRATIVE_SUBJECT = re.compile(
    r"\b(?:does|do|did|can|could|will|would|should|is|are|was|were|has|have|might|may)\s+"
    r"(?:that|this|these|those)\b(?=\s+[a-z])",
    re.IGNORECASE,
)
PERSON = re.compile(r"\b(she|he|her|him|his|hers|herself|himself)\b", re.IGNORECASE)
PLURAL = re.compile(r"\b(they|them|their|theirs|those|these|ones)\b", re.IGNORECASE)
# "What did they decide?": people (a committee, a team), not the thing talked about.
_THEY_PEOPLE = re.compile(
    r"\bthey\s+(?:\w+ly\s+)?(?:decide|say|said|agree|think|thought|want|plan|propose|suggest|"
    r"vote|mention|discuss|choose|chose|recommend|told|tell|ask)\w*\b",
    re.IGNORECASE,
)
_SAME = re.compile(r"\bthe same\b", re.IGNORECASE)
# "more than that", "any longer than this": "that" is the amount just given, not the topic.
COMPARED = re.compile(
    r"\b(?:(?:more|less|fewer|higher|lower|longer|shorter|bigger|smaller|greater|larger|"
    r"cheaper|older|younger|earlier|later)\s+than|over|under|above|below)\s+(?:that|this)\b"
    r"(?=\s*[?.!,;]|\s*$|\s+(?:in|on|at|for|to|with|if|when|or|and|but|per|from|by|again)\b)",
    re.IGNORECASE,
)
# "hold it", "extend it": a verb and the pronoun it acts on (not "do it", "take it": verbs
# any answer uses).
OBJECT = re.compile(r"\b(?P<verb>[A-Za-z]{3,})\s+(?:it|them)\b(?!['’])", re.IGNORECASE)
_LIGHT_VERBS = frozenset(
    stem(v)
    for v in wordset(
        """do did done make get give take have had need want know find see tell ask put keep
        let help try use about with without for from into onto than like"""
    )
)
# "those"/"these" standing alone (not "those tablets", "these ones").
_SHOWN = re.compile(
    r"\b(?:those|these)\b(?=\s*[?.!,;]|\s*$|\s+(?:away|out|off|up|back|again|too|in|on|at|"
    r"for|to|with|from|are|were|do|did|can|will|should|need|have|still)\b)",
    re.IGNORECASE,
)
_DEMONSTRATIVE_WORD = re.compile(r"\b(?:that|this|these|those)\b", re.IGNORECASE)
REFERENCES = (PRONOUN, DET_NOUN, DEMONSTRATIVE, DEMONSTRATIVE_SUBJECT, PERSON, PLURAL)


def first_reference(message: str) -> int | None:
    """Where the first word pointing back at something starts, or ``None``."""
    starts = [m.start() for p in (*REFERENCES, _SAME) if (m := p.search(message))]
    return min(starts, default=None)


def refers_back(message: str) -> bool:
    return first_reference(message) is not None


def reference_word(message: str) -> str:
    """The first word pointing back at something ("it", "that" ...), or ``""``."""
    first = first_reference(message)
    if first is None:
        return ""
    found = words(message[first:])
    return found[0].lower() if found else ""


def _possessive(phrase: str, word: str, following: str) -> str:
    """``phrase`` standing in for ``word``: "his" → "Tom's"; "her" before a noun ("her team")
    is possessive too, "her" at the end or before a preposition is not."""
    low = word.lower()
    owner = low in {"his", "hers"} or (low == "her" and re.match(r"\s+[a-z]", following))
    # "her to", "her a family member": an object, not an owner
    preposition = re.match(
        r"\s+(?:to|for|about|with|at|on|in|by|from|if|and|or|a|an|the|some|any|my|your|our)\b",
        following,
    )
    return f"{phrase}'s" if owner and not preposition else phrase


def _case(phrase: str, at_start: bool) -> str:
    return phrase[:1].upper() + phrase[1:] if at_start else phrase


@dataclass(frozen=True)
class Resolver:
    """What each kind of back-reference in a follow-up stands for: ``thing`` ("it", "that":
    what the last answer introduced, else the topic), ``person`` ("she", "he"), ``plural``
    ("they", "those": the people or the aspect just asked about, else the thing), ``shown``
    ("those" alone: what the last answer brought up), ``amount`` ("more than that"); a verb's
    "it" is first what the last answer did that verb to ("hold it" → "hold reset button")."""

    topic: str
    thing: str
    person: str
    plural: str
    people: bool  # ``plural`` names people ("children"), so ``context`` is added beside them
    shown: str = ""  # "those"/"these": what the last answer brought up ("transport bolts")
    amount: str = ""  # "more than that": the amount the last answer gave ("£50")
    context: str = ""  # what the last question asked about them ("usual dose of amoxicillin")
    history: tuple[HistoryMessage, ...] = ()  # for what the last answer did a verb to

    @classmethod
    def of(
        cls,
        history: Sequence[HistoryMessage],
        topic: str,
        is_topical: Callable[[str], bool],
        aspects: frozenset[str],
        context: str = "",
        message: str = "",
    ) -> Resolver:
        """``message``: the follow-up, whose "she" or "he" says which person fits."""
        thing = referents.introduced(history, is_topical) or topic
        people = referents.plural_people(history)
        found = referents.aspect(history, aspects)
        plural = people or (f"{found} of {thing}" if found else thing)
        shown = "" if people or found else referents.introduced_plural(history, is_topical)
        pronoun = PERSON.search(message)
        return cls(
            topic,
            thing,
            referents.last_person(history, pronoun.group(0) if pronoun else ""),
            plural,
            bool(people),
            shown=shown,
            amount=referents.amount(history),
            context=context or topic,
            history=tuple(history),
        )

    def _object(self, m: re.Match[str]) -> str:
        """ "hold it" → "hold reset button": what the last answer said to hold."""
        verb = m.group("verb")
        if stem(verb) in _LIGHT_VERBS or verb.lower() in STOPWORDS or not self.history:
            return m.group(0)
        found = referents.acted_on(self.history, verb)
        return f"{verb} {found}" if found else m.group(0)

    def _compared(self, m: re.Match[str]) -> str:
        """ "more than that" → "more than £50", "over that" → "over £50"; without an amount,
        just "more" / "over"."""
        head = re.sub(r"\s+(?:that|this)$", "", m.group(0), flags=re.IGNORECASE)
        return f"{head} {self.amount}" if self.amount else head.split()[0]

    def replace(self, message: str) -> str:
        """``message`` with its back-references replaced (unchanged when none resolved)."""

        def sub(pattern: re.Pattern[str], text: str, about: str) -> str:
            def repl(m: re.Match[str]) -> str:
                word = m.group(0).lower().replace("’", "'")
                if pattern in (PLURAL, PRONOUN) and _THEY_PEOPLE.match(text, m.start()):
                    return m.group(0)  # "What did they decide?": a committee, not a thing
                if pattern is DEMONSTRATIVE_SUBJECT:
                    found = _DEMONSTRATIVE_WORD.search(m.group(0))
                    assert found is not None
                    return m.group(0)[: found.start()] + about
                phrase = about + (" is" if word == "it's" else "")
                if pattern is PERSON:
                    phrase = _possessive(about, word, text[m.end() :])
                return _case(phrase, m.start() == 0)

            return pattern.sub(repl, text)

        out = COMPARED.sub(self._compared, message)
        out = OBJECT.sub(self._object, out)
        out = sub(DET_NOUN, out, self.thing)
        if self.person:
            out = sub(PERSON, out, self.person)
        if self.shown:
            out = sub(_SHOWN, out, self.shown)  # "Should I throw those away?": the bolts
        plural = sub(PLURAL, out, self.plural)
        if plural != out and self.people and self.context.lower() not in plural.lower():
            # "What's the most children can have (usual dose of amoxicillin)?"
            plural += f" ({self.context})"
        out = sub(PRONOUN, plural, self.thing)
        out = sub(DEMONSTRATIVE_SUBJECT, out, self.thing)
        return sub(DEMONSTRATIVE, out, self.thing)
