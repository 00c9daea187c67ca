"""What a follow-up's "she", "they" or "it" can point at besides the conversation's topic: what
was just said. Used by ``reformulate``.

- A person: "she", "he", "her", "him", "his" name the person the last answer (else the last
  user message, else earlier ones) named: after "Who runs the compost workshop?" and "Maria
  Lopez runs it [1]", "When is she free?" asks when Maria Lopez is free.
- What the last answer introduced: after a question that asks *which thing* ("Which tablets
  are best for hay fever?", "What form do I need for expenses?"), the answer's new words
  ("Cetirizine is best for hay fever [1]" → "Cetirizine") are what "it" and "that" mean next.
- The aspect asked about: after "What are the side effects of ibuprofen?", "they" and "those"
  are the side effects of ibuprofen, not ibuprofen.
- The things the last answer brought up: after "Do I need to do anything before the first
  wash?" and "Before the first wash, remove the three transport bolts [1]", "Should I throw
  those away?" asks about the transport bolts (``introduced_plural``).
- The amount the last answer gave: after "You may accept gifts worth up to £50 [1]", "more
  than that" is more than £50 (``amount``).
- Nothing outside the message: in "My head is pounding. What could it be?" the "it" points at
  what the message itself just described, so the message is a new question, not a follow-up.

Only answers that cite a source count as "what was said" (a refusal names nothing)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ragchat.reader.text import NEXT_CELL, STOPWORDS, stem, words, wordset
from ragchat.retrieve.terms import NUMBER_WORDS
from ragchat.types import HistoryMessage

_CITED = re.compile(r"\[\d{1,2}\]")
_TITLE = r"(?:Dr|Mr|Mrs|Ms|Mx|Miss|Prof|Professor)\.?"
_NAME_WORD = r"[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?"
_NAME = re.compile(rf"(?:{_TITLE}\s+)?{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}}")
# A capitalised word at the start of a sentence is a name only when a verb of saying or
# doing follows it ("Maria said", "Tom agreed"); "is", "can", "takes" are not enough
# ("Ibuprofen is suitable for children").
_NAME_VERB = re.compile(
    r"\s+(?:said|says|leads|led|asked|agreed|suggested|mentioned|explained|thinks|thought|"
    r"proposed|offered|volunteered|presented|manages|chairs|chaired|replied|added|noted)\b"
)
# "my daughter", "our manager": the person a user's own message is about.
RELATION = re.compile(
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:daughter|son|child|baby|toddler|wife|husband|partner|mum|"
    r"mom|mother|dad|father|sister|brother|grandmother|grandfather|grandma|grandpa|friend|"
    r"manager|boss|colleague|coworker|supervisor|team lead|line manager|tutor|teacher|"
    r"lecturer|doctor|gp|landlord|neighbour|neighbor|carer|client)\b",
    re.IGNORECASE,
)
_SHE = wordset("she her hers herself")
_HE = wordset("he him his himself")
_FEMALE = wordset("daughter wife mum mom mother sister grandmother grandma")
_MALE = wordset("son husband dad father brother grandfather grandpa")
# Capitalised words that are not people.
_NOT_NAMES = wordset(
    """I The A An This That These Those It Its If When While Yes No Not Our Your My We You They
    He She His Her Please Note Check Use Make Take Call Send Ask See Tell Also Then Finally
    First Next Once Before After Monday Tuesday Wednesday Thursday Friday Saturday Sunday
    January February March April May June July August September October November December
    Christmas Easter HR IT UK US EU NHS PDF Step Section Table Chapter Page Figure Error
    Manager Managers Team Staff Employee Employees Company Handbook Policy Guide Welcome Hello
    Hi Thanks Okay OK Tonight Today Tomorrow Yesterday Finally Good Great Right Sure Well So
    According Under Every Each All Any Some Most Many Do Does Did Can Could Would Should Will
    Is Are Was Were Has Have Had What Who Which Where Why How"""
)
_SPEAKER = re.compile(rf"(?:^|\n|\]\s*)({_NAME_WORD}(?:\s+{_NAME_WORD})?):\s")
# A question that asks which thing (its answer brings the thing up): "which X", "what X do",
# "what is the name of".
_WHICH = re.compile(
    r"^\s*(?:and\s+)?(?:which|what(?:\s+(?:kind|sort|type|brand)\s+of)?)\s+"
    r"(?P<thing>(?:[\w'’-]+\s+){0,2}?[\w'’-]+)\s+(?:do|does|did|should|shall|can|could|is|are|"
    r"was|were|will|would|has|have|helps?|works?|needs?|goes|applies|covers?)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|…\s*")
_LABEL = re.compile(r"[^:;\n]{1,40}:\s")
_SUBORDINATE = re.compile(
    r"^\s*(?:if|when|whenever|while|after|before|since|once|until|unless)\b", re.IGNORECASE
)
_QUESTION_WORD = re.compile(
    r"^\s*(?:what|what's|how|why|where|who|which|is|are|can|could|should|does|do|will|would)\b",
    re.IGNORECASE,
)


def last_answer(history: Sequence[HistoryMessage]) -> str:
    """The last assistant reply when it cites a source (a refusal or small talk names
    nothing), without its citation markers; else ``""``."""
    if not history or history[-1].role != "assistant":
        return ""
    content = history[-1].content
    return _CITED.sub("", content).strip() if _CITED.search(content) else ""


def starts_subordinate(text: str) -> bool:
    """ "if I pay termly", "when she's back": a condition or a time, not a new subject."""
    return _SUBORDINATE.match(text) is not None


def _row_cell(text: str, start: int) -> bool:
    """The words from ``start`` to the next colon label a cell of a quoted table row ("Role:
    Chair; Elected: Rosalind Achebe", "Weight of child: 16 to 20 kg"), not a speaker's."""
    label = _LABEL.match(text, start)
    if label is None:
        return False
    line = text[label.end() :].split("\n", 1)[0]
    return NEXT_CELL.search(line) is not None or text[:start].rstrip().endswith(";")


def people(text: str) -> list[str]:
    """Names of people in ``text``, in order: capitalised words that are not at a sentence
    start (or are followed there by a verb, a second name part or a colon: "Maria said",
    "Maria Lopez", "Maria: ..."), with a title when they have one ("Dr Patel")."""
    found = [m.group(1) for m in _SPEAKER.finditer(text) if not _row_cell(text, m.start(1))]
    for m in _NAME.finditer(text):
        name = m.group(0)
        parts = name.split()
        while parts and (parts[0] in _NOT_NAMES or parts[0].lower() in NUMBER_WORDS):
            parts = parts[1:]  # "One spray into each nostril": a number, not a person
        if not parts:
            continue
        name = " ".join(parts)
        if re.fullmatch(_TITLE, name):
            continue  # "Mr and Mrs Barrett": a title is no one by itself
        start = m.start() + m.group(0).index(parts[0])
        if _row_cell(text, start):
            continue  # a column's label
        before = text[:start].rstrip()
        at_start = not before or before[-1] in '.!?:\n"“(['
        titled = re.match(_TITLE + r"\s", name) is not None
        if at_start and not titled and len(parts) < 2 and not _NAME_VERB.match(text[m.end() :]):
            continue
        if name not in found:
            found.append(name)
    return found


def _agrees(relation: str, pronoun: str) -> bool:
    """ "my mum" can be "she" but not "he"; "my partner" either."""
    word = relation.split()[-1].lower()
    if pronoun.lower() in _SHE:
        return word not in _MALE
    if pronoun.lower() in _HE:
        return word not in _FEMALE
    return True


def last_person(history: Sequence[HistoryMessage], pronoun: str = "") -> str:
    """The person most recently named: first the one the user's last message was about ("my
    mum", when ``pronoun`` can be her), then the last answer's first name, then the user's
    messages (a name, or "my daughter") and earlier answers, newest first."""
    asked = last_question(history)
    own = RELATION.search(asked) if pronoun else None
    if own and not people(asked) and _agrees(own.group(0), pronoun):
        return own.group(0).lower()  # "share the cameras with my mum" / "if I make her ..."
    answer = last_answer(history)
    if answer and (names := people(answer)):
        return names[0]
    for m in reversed(history):
        if names := people(m.content):
            return names[0]
        relation = RELATION.search(m.content) if m.role == "user" else None
        if relation:
            return relation.group(0).lower()
    return ""


def last_question(history: Sequence[HistoryMessage]) -> str:
    return next((m.content for m in reversed(history) if m.role == "user"), "")


MAX_CELL_WORDS = 5
# A table row quoted as "Column: value; Column: value": its first cell names the row.
_CELL = re.compile(r"^\s*[^:;\n]{1,40}:\s*(?P<value>[^;:\n]*[A-Za-z][^;:\n]*?)\s*[;.]?\s*$")
# "What enzyme digests fats?", "Which city ...": a question that asks for a thing (not "What
# is ...", "What does X do ...").
_WHAT_THING = re.compile(
    r"^\s*(?:and\s+)?(?:which|what)\s+(?!is\b|are\b|was\b|were\b|does\b|do\b|did\b|can\b|"
    r"should\b|would\b|will\b|about\b|if\b|happens\b|the\b|a\b|an\b)[A-Za-z]+\b",
    re.IGNORECASE,
)


def introduced(history: Sequence[HistoryMessage], is_topical: Callable[[str], bool]) -> str:
    """What the last answer brought up when the last question asked *which* thing: the
    longest run of topical words of the answer's first sentence that the question did not
    use ("Which tablets help with hay fever?" / "Cetirizine helps with hay fever" →
    "Cetirizine"), or the first cell of the table row it quoted ("What enzyme digests fats?"
    / "Enzyme: Lipase; Made in: pancreas" → "Lipase"); ``""`` otherwise."""
    question = last_question(history)
    which = _WHICH.match(question)
    answer = last_answer(history)
    if not answer:
        return ""
    if which is not None and not any(is_topical(w) for w in words(which.group("thing"))):
        return ""  # "which genetic changes are involved?": an aspect, not a thing
    first = _SENTENCE.split(answer, maxsplit=1)[0]
    cell = _CELL.match(first)
    if cell and (which or _WHAT_THING.match(question)):
        value = cell.group("value").strip()
        # a cell names a thing in a few words; "Summary: X is a rare disorder" is prose
        if len(words(value)) <= MAX_CELL_WORDS and value.lower() not in question.lower():
            return value
    if which is None:
        return ""
    asked = {w.lower() for w in words(question)}
    best: list[str] = []
    run: list[str] = []
    for w in [*words(first), ""]:
        if w and w.lower() not in asked and is_topical(w):
            run.append(w)
            continue
        if len(run) > len(best):
            best = run
        run = []
    return " ".join(best)


_NUMBER_WORDS = frozenset(NUMBER_WORDS[1:]) | wordset("both several")


def _plural(word: str) -> bool:
    low = word.lower()
    return len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is"))


def introduced_plural(history: Sequence[HistoryMessage], is_topical: Callable[[str], bool]) -> str:
    """The things the last answer's first sentence brought up that the last question did not
    name: its longest run of topical words that ends with a plural noun, without a leading
    count ("remove the three transport bolts" → "transport bolts"); ``""`` if none. This is
    what "those" and "these" point at when the question asked about no aspect or group."""
    answer = last_answer(history)
    if not answer:
        return ""
    asked = {w.lower() for w in words(last_question(history))}
    first = _SENTENCE.split(answer, maxsplit=1)[0]
    best: list[str] = []
    run: list[str] = []
    for w in [*words(first), ""]:
        if w and w.lower() not in asked and is_topical(w):
            run.append(w)
            continue
        while run and run[0].lower() in _NUMBER_WORDS:
            run = run[1:]
        if run and _plural(run[-1]) and len(run) > len(best):
            best = run
        run = []
    return " ".join(best)


_DETERMINERS = wordset("the a an your my our this that these those its their")
MAX_OBJECT_WORDS = 4


def acted_on(history: Sequence[HistoryMessage], verb: str) -> str:
    """What the last answer did ``verb`` to: "How long do I hold it for?" after "press and
    hold the reset button with a paperclip" → "reset button"; the words after the same verb
    (any form: "extend", "extends"), without a determiner, up to a function word; ``""``
    when the answer never uses the verb."""
    answer = last_answer(history)
    if not answer:
        return ""
    wanted = stem(verb)
    tokens = re.findall(r"[\w'’-]+|[^\w\s]", answer)
    for i, token in enumerate(tokens[:-1]):
        if stem(token) != wanted:
            continue
        rest = tokens[i + 1 :]
        while rest and rest[0].lower() in _DETERMINERS:
            rest = rest[1:]
        found: list[str] = []
        for w in rest:
            # a thing, not an amount: "claim 45p per mile" names no object
            if not w[0].isalpha() or w.lower() in STOPWORDS or len(found) == MAX_OBJECT_WORDS:
                break
            found.append(w)
        if found:
            return " ".join(found)
    return ""


# An amount: "£50", "45p", "10,000 miles", "3 months", "100 mg", a time ("07:30", "5 pm").
_AMOUNT = re.compile(
    r"[£$€]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:%|p\b|(?:mg|g|kg|ml|cm|mm|m|km|"
    r"miles?|days?|weeks?|months?|years?|hours?|minutes?|times|GBP|EUR|USD)\b)"
    r"|\b\d{1,2}:\d{2}\b|\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b"
)


def amount(history: Sequence[HistoryMessage]) -> str:
    """The first amount the last (cited) answer gave, or ``""``: what "more than that" means."""
    found = _AMOUNT.search(last_answer(history))
    return found.group(0) if found else ""


def aspect(history: Sequence[HistoryMessage], aspects: frozenset[str]) -> str:
    """The plural aspect the last question asked about ("side effects", "symptoms",
    "steps"), with the word before it when that is part of it ("side"); ``""`` if none."""
    tokens = words(last_question(history))
    for i, w in enumerate(tokens):
        if w.lower() in aspects and w.lower().endswith("s"):
            before = tokens[i - 1].lower() if i else ""
            if before in {"side", "warning", "possible", "common", "main", "early"}:
                return f"{tokens[i - 1]} {w}"
            return w
    return ""


# People a question can ask about as a group: "they" in the next message means them.
_PEOPLE = wordset(
    """children kids adults people staff employees managers teenagers teens babies men women
    patients students members volunteers parents colleagues contractors visitors tenants
    customers clients pupils"""
)


def plural_people(history: Sequence[HistoryMessage]) -> str:
    """The group of people the last question asked about ("And for children?" →
    "children"), or ``""``."""
    return next((w for w in words(last_question(history)) if w.lower() in _PEOPLE), "")


def refers_within(message: str, first_reference: int, has_topic: Callable[[str], bool]) -> bool:
    """Whether the back-reference at ``first_reference`` points at something the message said
    before it, in an earlier statement ("My head is pounding. What could it be?") or an
    earlier clause before a question ("the kettle smells of burning, is it safe?"); a
    conditional ("If I miss a dose, can I take it later?") does not name a new subject."""
    before = message[:first_reference]
    pieces = [p for p in _SENTENCE.split(before) if p.strip()]
    complete = before.rstrip()[-1:] in tuple(".!?;…")
    sentences = pieces if complete else pieces[:-1]
    statements = [p for p in sentences if not p.rstrip().endswith("?")]
    if any(has_topic(p) and not _SUBORDINATE.match(p) for p in statements):
        return True
    if complete or not pieces:
        return False
    clauses = re.split(r",\s*(?=\S)", pieces[-1])
    if len(clauses) < 2 or not _QUESTION_WORD.match(clauses[-1]):
        return False
    lead = ", ".join(clauses[:-1])
    return has_topic(lead) and not _SUBORDINATE.match(lead)
