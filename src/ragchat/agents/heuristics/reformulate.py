"""Follow-up reformulation without an LLM: "What are its side effects?" after "What is
ibuprofen used for?" becomes "What are ibuprofen side effects?", so retrieval sees the topic.

The topic of a question is its longest run of topical words: words that are neither stopwords
nor generic question vocabulary ("side effects", "dose", "kids", "safe" ...). A message is a
follow-up when it has a previous user question and it either has no topic of its own, starts
with a continuation ("and ...", "what about ...") or refers back ("it", "its", "they", "the same",
"this medicine"). Resolution, first rule that applies:

1. "what/how about X" with a topic X → the previous question with its topic replaced by X;
2. pronouns / "this medicine" → replaced by the previous topic ("its" → "<topic>");
3. "and for children?" / "what about kids?" → "<topic> for children";
4. "How much should I take?" → "How much <topic> should I take?";
5. otherwise the topic is appended ("When should I see a doctor for <topic>?") or, for a bare
   noun phrase ("side effects?"), prefixed ("<topic> side effects?").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragchat.agents.heuristics._text import STOPWORDS, words, wordset
from ragchat.types import HistoryMessage

# Question vocabulary that does not name a topic by itself.
GENERIC = wordset(
    """side effect effects dose doses dosage dosing take taking took use uses used using safe
    safety kid kids child children baby babies toddler toddlers adult adults teen teens teenager
    teenagers elderly people person someone everyone anyone pregnant pregnancy breastfeeding
    symptom symptoms sign signs cause causes caused risk risks treatment treatments treat treated
    benefit benefits interaction interactions trigger triggers type types work works worked long
    often much many amount time times day days daily week weeks maximum max minimum normal common
    usual usually good bad better best okay ok fine help helps need needs want know tell explain
    mean means happen happens happened start stop get give given go going come make doctor
    clinician pharmacist else instead alternative alternatives option options thing things stuff
    one ones way ways kind kinds also too really still ever again more less well exactly
    actually else work okay alright something anything everything question questions answer
    difference different same prevent prevention avoid feel feeling should could would
    apply applies affect affects
    """
)
_PRONOUN = re.compile(r"\b(it's|it’s|its|it|they|them|their|theirs)\b", re.IGNORECASE)
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|that|these|those)(?:\s+(?:medicine|medication|drug|pill|pills|tablet|tablets|"
    r"condition|illness|disease|one|ones|stuff|thing|treatment|problem))?(?=\s*[?.!,]|\s*$|"
    r"\s+(?:is|are|was|does|do|can|could|will|would|should|has|have|cause|causes|help|helps|"
    r"work|works|affect|affects|mean|means|last|lasts|with|for|at|in|on|safe|okay|ok|"
    r"dangerous|bad|good|normal|true|right|wrong|serious|worse|better|every|each|twice|daily|"
    r"too|if)\b|\s+\w+ed\b)",
    re.IGNORECASE,
)
_DET_NOUN = re.compile(
    r"\b(?:this|that|these|those|the same)\s+(?:medicine|medication|drug|pill|pills|tablet|"
    r"tablets|condition|illness|disease|treatment|problem)\b",
    re.IGNORECASE,
)
_CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|or|plus|so|what about|how about|what if|and what about|and how about)"
    r"\b[\s,]*",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+", re.IGNORECASE)
_HOW_MUCH = re.compile(r"^\s*(how\s+(?:much|many))\b", re.IGNORECASE)
_ATTRIBUTE_END = wordset(
    """effect effects dose doses dosage symptoms signs causes risks treatment treatments uses
    benefits interactions triggers types warning warnings"""
)
_QUESTION_START = wordset(
    "what what's how when where why who which is are can could should does do did will would"
)


# Generic words that do not make a message a follow-up on their own ("what should I do?").
VAGUE = wordset(
    """help do thing things stuff okay ok fine good bad know tell want need mean happen happens
    happened question questions answer something anything everything get go going come make
    really still ever again well actually alright feel feeling should could would else"""
)
# Social messages are never reformulated.
SOCIAL = wordset(
    """thanks thank you thx ok okay great cool nice good perfect awesome hi hello hey bye
    goodbye cheers yes no yeah yep nope sure alright got it lol wow oh ah"""
)


_AGE = re.compile(r"(?:year|month|week|day)s?-olds?$")


def _is_topical(word: str) -> bool:
    low = word.lower().replace("’", "'")
    return (
        low not in STOPWORDS
        and low not in GENERIC
        and low not in _QUESTION_START
        and not low.isdigit()
        and len(low) > 1
        and low not in {"i'm", "i've", "i'd", "don't", "doesn't", "can't", "isn't"}
        and not _AGE.search(low)
    )


def topic(text: str) -> str:
    """The main topic phrase of a question: its longest run of topical words; ties go to the
    longer phrase, then the first. A number continues a run, and "type" before a number starts
    one ("type 2 diabetes")."""
    best: list[str] = []
    run: list[str] = []
    tokens = words(text)
    for i, w in enumerate([*tokens, ""]):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if w and (
            _is_topical(w) or (w.isdigit() and run) or (w.lower() == "type" and nxt.isdigit())
        ):
            run.append(w)
            continue
        if (len(run), len(" ".join(run))) > (len(best), len(" ".join(best))):
            best = run
        run = []
    return " ".join(best)


def _previous_topic(history: Sequence[HistoryMessage]) -> str:
    for m in reversed(history):
        if m.role == "user":
            found = topic(m.content)
            if found:
                return found
    return ""


def _previous_question(history: Sequence[HistoryMessage]) -> str:
    return next((m.content for m in reversed(history) if m.role == "user"), "")


def _refers_back(message: str) -> bool:
    return bool(
        _PRONOUN.search(message)
        or _DET_NOUN.search(message)
        or _DEMONSTRATIVE.search(message)
        or re.search(r"\bthe same\b", message, re.IGNORECASE)
    )


def reference_word(message: str) -> str:
    """The first word pointing back at something ("it", "that" ...), or ``""``."""
    for pattern in (_PRONOUN, _DET_NOUN, _DEMONSTRATIVE):
        m = pattern.search(message)
        if m:
            return m.group(0).split()[0].lower()
    return ""


def is_follow_up(message: str, history: Sequence[HistoryMessage]) -> bool:
    """True when ``message`` needs the conversation to be understood (see module docstring)."""
    if not message.strip() or not _previous_topic(history):
        return False
    tokens = [w.lower() for w in words(message)]
    if all(t in SOCIAL for t in tokens):
        return False
    if _CONTINUATION.match(message) or _refers_back(message):
        return True
    generic = [t for t in tokens if t in GENERIC and t not in VAGUE]
    return not topic(message) and bool(generic)


def _case(phrase: str, at_start: bool) -> str:
    return phrase[:1].upper() + phrase[1:] if at_start else phrase


def _replace_refs(message: str, subject: str) -> str:
    def sub(pattern: re.Pattern[str], text: str) -> str:
        def repl(m: re.Match[str]) -> str:
            word = m.group(0).lower().replace("’", "'")
            return _case(subject + (" is" if word == "it's" else ""), m.start() == 0)

        return pattern.sub(repl, text)

    out = sub(_DET_NOUN, message)
    out = sub(_PRONOUN, out)
    out = sub(_DEMONSTRATIVE, out)
    return out


def reformulate(message: str, history: Sequence[HistoryMessage]) -> str:
    """A standalone version of ``message``; unchanged when it is not a follow-up."""
    if not is_follow_up(message, history):
        return message
    subject = _previous_topic(history)
    text = message.strip()
    end = text[-1] if text[-1] in "?.!" else "?"
    body = text.rstrip("?.! ")
    about = _ABOUT.match(body)
    same = re.search(r"\bthe same\b", body, re.IGNORECASE)
    if about or same:
        rest = body[about.end() :] if about else body
        new_topic = topic(rest)
        if new_topic and (same or not _refers_back(rest)):
            previous = _previous_question(history)
            old = topic(previous)
            if old and old in previous:
                return previous.replace(old, new_topic, 1)
            return f"{new_topic}{end}"
    if _refers_back(body):
        return _replace_refs(body, subject) + end
    cont = _CONTINUATION.match(body)
    if cont:
        rest = body[cont.end() :].strip()
        return f"{subject} {rest}{end}" if rest else f"{subject}{end}"
    how_much = _HOW_MUCH.match(body)
    if how_much:
        return f"{how_much.group(1)} {subject}{body[how_much.end() :]}{end}"
    first = words(body)[0].lower() if words(body) else ""
    if first in _QUESTION_START:
        last = words(body)[-1].lower()
        joiner = "of" if last in _ATTRIBUTE_END else "for"
        return f"{body} {joiner} {subject}{end}"
    return f"{subject} {body[:1].lower()}{body[1:]}{end}"
