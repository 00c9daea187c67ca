"""Follow-up reformulation without an LLM: "What are its side effects?" after "What is
ibuprofen used for?" becomes "What are ibuprofen side effects?", so retrieval sees the topic.

The topic of a question is its longest run of topical words (``topics``): words that are
neither stopwords nor generic question vocabulary ("side effects", "dose", "kids", "safe" ...);
"learn about X", "tell me about X" name X. A message is a follow-up when it has a previous user
question and it either has no topic of its own, starts with a continuation ("and ...", "what
about ...") or refers back ("it", "its", "they", "the same", "this medicine").

What a follow-up refers to is the *conversation's* subject, not the last noun seen: it is set
by a question that stands on its own and kept through the follow-ups that refer back to it,
whatever else they name; only "what about X" moves it to X. After "Tell me about ibuprofen" and
"Can I take it with warfarin?", "How much should an adult take?" is still about ibuprofen.
What was just said counts too (``referents``, ``pointers``): "she" is the person the last
answer named, "they" the aspect or people just asked about, "it" after "Which X ...?" the
thing the answer gave, "those" what the answer brought up, "more than that" the amount it
gave; a message that describes something and asks about "it" ("My head is pounding. What
could it be?") is a new question.

Resolution, first rule that applies:

1. "what/how about X" with a topic X → the previous question (as searched) with the part X
   stands for replaced by X: the phrase after the same preposition ("in London" → "in
   Paris"), a place for a place, a code for a code, else what it named; but a value ("the
   drain hose height") after a yes/no question is a question of its own (``restate``);
2. pronouns / "this medicine" → replaced by what they point at (``pointers.Resolver``);
3. "and for children?" / "what about kids?" → the previous question for that group when it
   named another ("the usual adult dose" → "the usual dose … for children"), the phrase
   after the same preposition swapped, else "<topic> for children";
4. "How much should I take?" → "How much <topic> should I take?";
5. otherwise the topic is appended ("When should I see a doctor for <topic>?") or, for a bare
   noun phrase ("side effects?"), prefixed ("<topic> side effects?").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragchat.agents.heuristics import referents, restate
from ragchat.agents.heuristics.pointers import (
    PERSON,
    Resolver,
    first_reference,
    reference_word,
    refers_back,
)
from ragchat.agents.heuristics.topics import (
    ATTRIBUTE_END,
    CODE,
    GENERIC,
    QUESTION_START,
    is_topical,
    noun_topic,
    subject,
    topic,
)
from ragchat.reader.text import STOPWORDS, words, wordset
from ragchat.types import HistoryMessage

__all__ = [
    "GENERIC",
    "SOCIAL",
    "VAGUE",
    "conversation_topic",
    "is_follow_up",
    "reference_word",
    "reformulate",
    "subject",
    "topic",
]

_CONTINUATION = re.compile(
    r"^\s*(?:and|also|but|or|plus|so|what about|how about|what if|and what about|and how about)"
    r"\b[\s,]*",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+", re.IGNORECASE)
_HOW_MUCH = re.compile(r"^\s*(how\s+(?:much|many))\b", re.IGNORECASE)


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


def _has_topic(text: str) -> bool:
    return any(w.lower() not in SOCIAL for w in words(topic(text)))


def _follows(message: str, current: str) -> bool:
    """Whether ``message`` continues a conversation about ``current`` (see is_follow_up)."""
    if not message.strip() or not current:
        return False
    tokens = [w.lower() for w in words(message)]
    if all(t in SOCIAL for t in tokens):
        return False
    if _CONTINUATION.match(message):
        return True
    first = first_reference(message)
    if first is not None:
        # "My head is pounding. What could it be?": "it" is what the message just said.
        return not referents.refers_within(message, first, _has_topic)
    if topic(message):
        return False
    generic = [t for t in tokens if t in GENERIC and t not in VAGUE]
    # "Until when?", "Where?", "Why?": a bare question only makes sense after another.
    bare = len(tokens) <= 2 and message.rstrip().endswith("?")
    return bool(generic) or bare


def _switched_to(message: str) -> str:
    """The new subject of "what about X?" or "and X?" (X names something and does not refer
    back; "what about for students?" and "what about when I'm abroad?" narrow the subject,
    they do not change it)."""
    body = message.strip().rstrip("?.! ")
    about = _ABOUT.match(body)
    if about is None:
        cont = _CONTINUATION.match(body)
        rest = body[cont.end() :] if cont else ""
        return subject(rest) if rest and _bare_name(rest) else ""  # "And the premium plan?"
    rest = body[about.end() :]
    first = words(rest)[0].lower() if words(rest) else ""
    if refers_back(rest) or first in _PREPOSITION or first in _CLAUSE:
        return ""
    return subject(rest)


def conversation_topic(history: Sequence[HistoryMessage]) -> str:
    """What the conversation is about: the subject of its last standalone user question (or of
    the last "what about X?"), carried through the follow-ups after it; a follow-up that
    points at what the answer before it introduced ("Which tablets help?" / "Cetirizine
    [1]" / "Does it make you drowsy?") moves it there."""
    current = ""
    for i, m in enumerate(history):
        if m.role != "user":
            continue
        if _follows(m.content, current):
            switched = _switched_to(m.content)
            if not switched and refers_back(m.content):
                switched = referents.introduced(history[:i], is_topical)
            current = switched or current
        else:
            current = subject(m.content) or current
    return current


def _previous_topic(history: Sequence[HistoryMessage]) -> str:
    return conversation_topic(history)


def _previous_standalone(history: Sequence[HistoryMessage]) -> tuple[str, str]:
    """The last user question as asked and as it was searched: "What about warfarin?" after
    "Does it interact with the pill?" swaps the pill in "Does amoxicillin interact with the
    pill?"."""
    for i in range(len(history) - 1, -1, -1):
        if history[i].role == "user":
            earlier, asked = history[:i], history[i].content
            return asked, reformulate(asked, earlier) if is_follow_up(asked, earlier) else asked
    return "", ""


def _previous_raw(history: Sequence[HistoryMessage]) -> str:
    return next((m.content for m in reversed(history) if m.role == "user"), "")


def is_follow_up(message: str, history: Sequence[HistoryMessage]) -> bool:
    """True when ``message`` needs the conversation to be understood (see module docstring):
    also "she"/"he" after a message that named someone, with no topic before."""
    if _follows(message, _previous_topic(history)):
        return True
    person = PERSON.search(message)
    return (
        person is not None
        and bool(referents.last_person(history))
        and not referents.refers_within(message, person.start(), _has_topic)
    )


def _question(body: str, current: str, end: str) -> str:
    """A follow-up without a reference word, completed with the topic."""
    how_much = _HOW_MUCH.match(body)
    if how_much:
        return f"{how_much.group(1)} {current}{body[how_much.end() :]}{end}"
    first = words(body)[0].lower() if words(body) else ""
    tokens = [w.lower() for w in words(body)]
    if len(tokens) <= 2 and first not in QUESTION_START and tokens[-1] in QUESTION_START:
        return f"{body} {current}{end}"  # "Until when?" → "Until when annual leave?"
    if first in QUESTION_START:
        last = words(body)[-1].lower()
        joiner = "in" if last == "involved" else "of" if last in ATTRIBUTE_END else "for"
        return f"{body} {joiner} {current}{end}"
    return f"{current} {body[:1].lower()}{body[1:]}{end}"


_PREPOSITION = wordset("for in on at to with without during after before of from by about than")


# How many questions back "do it" may find the action it stands for.
MAX_BACK = 3
_CLAUSE = wordset("when whenever if while because since unless")


def _bare_name(rest: str) -> bool:
    """ "E5", "ibuprofen", "the blue bin": a short name and nothing else (not "for children",
    not "side effects")."""
    tokens = words(rest)
    return (
        0 < len(tokens) <= 3
        and tokens[0].lower() not in _PREPOSITION
        and tokens[0].lower() not in _CLAUSE
        and not refers_back(rest)
        and len(words(topic(rest))) == len([t for t in tokens if t.lower() not in STOPWORDS])
    )


def _swapped(history: Sequence[HistoryMessage], new_topic: str, *, name: bool = False) -> str:
    """The previous question (as searched) with what it named replaced by ``new_topic``; ""
    when it named nothing this could replace. ``name``: ``new_topic`` is all the follow-up
    said ("And lunch?"), so a common noun replaces a common noun ("dinner", not "UK
    trip")."""
    raw, previous = _previous_standalone(history)
    # a place or a name replaces a place or a name: "What about Paris?" after "What's the
    # hotel cap in London?"
    proper = restate.proper_slot(previous, new_topic)
    if proper:
        return proper
    # what varies is what the previous question named itself ("the contraceptive pill"), not
    # the topic its reference was resolved to
    common = name and new_topic.islower()
    for old in (noun_topic(raw, common=common), noun_topic(previous, common=common)):
        if old and old in previous:
            # "error E2" → "error E5": a code replaces the code, the noun before it stays
            *head, last = old.split()
            if head and CODE.fullmatch(last) and CODE.fullmatch(new_topic):
                new_topic = " ".join([*head, new_topic])
            return previous.replace(old, new_topic, 1)
    return ""


def reformulate(message: str, history: Sequence[HistoryMessage]) -> str:
    """A standalone version of ``message``; unchanged when it is not a follow-up."""
    if not is_follow_up(message, history):
        return message
    current = _previous_topic(history)
    text = message.strip()
    end = text[-1] if text[-1] in "?.!" else "?"
    body = text.rstrip("?.! ")
    about = _ABOUT.match(body)
    same = re.search(r"\bthe same\b", body, re.IGNORECASE)
    if about or same:
        rest = body[about.end() :] if about else body
        inner = first_reference(rest)
        if about and inner is not None and referents.refers_within(rest, inner, _has_topic):
            return f"{rest}{end}"  # "and what about pepsin, what pH does it like?"
        new_topic = topic(rest)
        if new_topic and (same or not refers_back(rest)):
            if about and restate.asks_value(rest) and restate.is_yes_no(_previous_raw(history)):
                return restate.own_question(rest, end)  # "What is the drain hose height?"
            # "What about in Paris?": the previous question's "in London" takes it
            previous = _previous_standalone(history)[1]
            slot = restate.same_slot(previous, rest, current) or restate.qualified(previous, rest)
            swapped = _swapped(history, new_topic, name=_bare_name(rest))
            return slot or swapped or f"{new_topic}{end}"
    if restate.DO_IT.search(body):
        asked = [m.content for m in reversed(history) if m.role == "user"][:MAX_BACK]
        redone = restate.redo(body, asked)  # "How do I do it?" → "How do I freeze my …?"
        if redone != body and not refers_back(redone):
            return f"{redone}{end}"
        body = redone
    if refers_back(body):
        aspects = ATTRIBUTE_END | GENERIC
        group = referents.plural_people(history)
        context = restate.gist(_previous_standalone(history)[1], group) if group else ""
        resolver = Resolver.of(history, current, is_topical, aspects, context, body)
        resolved = resolver.replace(body)
        if resolved != body:
            return resolved + end
        # "she" with nobody named: the topic still helps the search.
        return f"{body} ({current}){end}"
    cont = _CONTINUATION.match(body)
    if cont:
        rest = body[cont.end() :].strip()
        if not rest:
            return f"{current}{end}"
        if words(rest)[0].lower() in QUESTION_START:
            # "and what is the maximum dose?" is the question "what is the maximum dose of X?"
            return _question(rest[:1].upper() + rest[1:], current, end)
        if _bare_name(rest):  # "And E5?" after "What does error E2 mean?": what about E5
            swapped = _swapped(history, topic(rest), name=True)
            if swapped:
                return swapped
        # "And for children?" after "What's the usual adult dose of amoxicillin?"
        previous = _previous_standalone(history)[1]
        regrouped = restate.for_group(previous, rest, end)
        slot = regrouped or restate.same_slot(previous, rest, current)  # "And in Paris?"
        if slot:
            return slot
        if referents.starts_subordinate(rest) and previous:
            # "and if I pay termly instead?" is the last question asked under that condition
            return f"{previous.rstrip('?.! ')} {rest}{end}"
        return f"{current} {rest}{end}"
    return _question(body, current, end)
