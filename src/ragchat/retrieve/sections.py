"""Section signal: what a question asks about (treatment, symptoms, diagnosis, …) against the
section a passage sits in.

Health pages, manuals and FAQs put the answer to "how is X treated?" under a Treatment (or
Management) heading and the answer to "what are the symptoms of X?" under Symptoms; the body
text of such a section rarely repeats the word of the question. A passage's *section label* is
its heading path below the document title (Markdown, PDF) or, for a heading-less record that
opens with its question (MedQuAD, FAQ exports), that question. When the question's aspect and
the label's agree, the retriever lifts the passage and the offline composer prefers its
sentences.

A small table of aspects rather than a classifier: every aspect is a handful of words people
use in questions and that editors use in headings, and a miss only costs the boost.

Only the documents about the question's *topic* get the lift: "How is a migraine treated?"
names its topic ("migraine") besides its aspect ("treated"), and a Management section of a
diabetes page that BM25 found through "treated" must not be lifted. The topic is the
question's content words once the aspect's words are removed; a document is on topic when its
title, headings and retrieved text cover the most of them (rarer words among the candidates
counting more). A question with no topic word left ("How is it treated?") lifts every
document's matching section, as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

from ragchat.retrieve.terms import WEAK_STEMS, content_stems, content_words, stem
from ragchat.types import Chunk, Hit

# aspect → (question pattern, section label pattern)
_ASPECTS: dict[str, tuple[str, str]] = {
    "treatment": (
        r"\b(treat\w*|therap\w*|cure[sd]?|curing|manag\w*|helps? (with|for)|relie\w*|remed\w*"
        r"|medicines? for|medications? for|get rid of)\b",
        r"\b(treat\w*|therap\w*|management|managing|medicines|medications|remed\w*|relief)\b",
    ),
    "symptoms": (
        r"\b(symptoms?|signs?)\b",
        r"\b(symptoms?|signs?)\b",
    ),
    "diagnosis": (
        r"\b(diagnos\w*|tested|testing|tests? for|detect\w*|screen\w*)\b",
        r"\b(diagnos\w*|tests?|testing|screening|exams?)\b",
    ),
    "causes": (
        r"\b(caus\w*|why do (i|you|people|we) get|risk factors?|inherit\w*|genetic\w*|triggers?)\b",
        r"\b(caus\w*|risk factors?|inherit\w*|genetic\w*|triggers?)\b",
    ),
    "uses": (
        r"\b(used (for|to)|uses? (of|for)|good for|what (is|are)\b(?=[^?]*\bfor\s*\?))",
        r"\b(uses?|used for|indications?|what (it|they) (is|are) for)\b",
    ),
    # "What should I do during a tantrum?" → "During a tantrum", "What to do", "Coping".
    "action": (
        r"\b(what (should|can|do) (i|we|you|parents?) do|how (should|do|can) (i|we|you)"
        r" (handle|deal|cope|respond|react|stop|calm))\b",
        r"\b(during|what to do|coping|dealing with|handling|responding"
        r"|how to (handle|respond|cope))\b",
    ),
    # "Can I take it with warfarin?", "Does it interact with …", "combine … with".
    "interactions": (
        r"\b(interact\w*|combin\w*|mix\w*|together with|take\b(?=.*\bwith\b))",
        r"\b(interact\w*|other medicines|combin\w*)\b",
    ),
    "prevention": (
        r"\b(prevent\w*|avoid\w*|reduc\w* (the |my |your )?(risk|exposure|chance))\b",
        r"\b(prevent\w*|avoid\w*|reducing|exposure)\b",
    ),
    "outlook": (
        r"\b(outlook|prognosis|life expectancy|recover\w*)\b",
        r"\b(outlook|prognosis|recovery)\b",
    ),
    "complications": (
        r"\b(complications?)\b",
        r"\b(complications?)\b",
    ),
    "side_effects": (
        r"\b(side[- ]effects?|adverse)\b",
        r"\b(side[- ]effects?|adverse)\b",
    ),
    "dose": (
        r"\b(dose|doses|dosage|how much|how many (tablets|pills|mg))\b",
        r"\b(dose|doses|dosage|dosing|how much|how to take)\b",
    ),
    "frequency": (
        r"\bhow (many|common)\b.*\b(people|affected|have)\b",
        r"\b(frequency|how many people|how common)\b",
    ),
}
_QUESTION = {k: re.compile(q, re.IGNORECASE) for k, (q, _) in _ASPECTS.items()}
_LABEL = {k: re.compile(h, re.IGNORECASE) for k, (_, h) in _ASPECTS.items()}
_LEADING_QUESTION = re.compile(r"^\s*([^\n?]{8,200}\?)")
# "What is X?", "What are X?", MedQuAD's "What is (are) X ?": a definition, asked only when no
# other aspect is.
_DEFINITION_Q = re.compile(
    r"^\s*(?:(what|who)\s+(is|are)\b(?!.*\b(for|of|with)\b.*\?)"
    r"|(can you |could you |please )?(tell me (about|more about)|explain|describe"
    r"|what do you know about)\b)",
    re.I,
)
_DEFINITION_L = re.compile(
    r"\b(what (it|they) (is|are)|what is|what are|overview|definition|summary|about)\b", re.I
)


def question_aspects(question: str) -> frozenset[str]:
    """The aspects ``question`` asks about (empty when it names none)."""
    found = frozenset(k for k, pattern in _QUESTION.items() if pattern.search(question))
    if not found and _DEFINITION_Q.search(question):
        return frozenset({"definition"})
    return found


def without_aspect_words(question: str) -> str:
    """``question`` without the short phrases that name an aspect ("outlook", "side effects",
    "dose"): they say what kind of answer is wanted, not what it is about, and documents often
    say them otherwise ("prognosis")."""
    for pattern in _QUESTION.values():
        question = pattern.sub(
            lambda m: " " if len(m.group(0).split()) <= 2 else m.group(0), question
        )
    return question


def label_aspects(label: str) -> frozenset[str]:
    """The aspects a section label (heading path or leading question) is about."""
    if not label:
        return frozenset()
    found = {k for k, pattern in _LABEL.items() if pattern.search(label)}
    if label.rstrip().endswith("?"):
        # A leading question is labelled like a question, so "What are the treatments for X?"
        # and "How is X treated?" agree.
        found |= question_aspects(label)
    elif _DEFINITION_L.search(label):
        found.add("definition")
    return frozenset(found)


def section_label(chunk: Chunk) -> str:
    """Heading path below the document title, else the question the text opens with."""
    md = chunk.metadata
    title = str(md.get("doc_title") or md.get("title") or "")
    path = [str(h) for h in (md.get("heading_path") or ()) if str(h) and str(h) != title]
    if path:
        return " > ".join(path)
    body = chunk.text or ""
    if title and body.startswith(title):
        body = body[len(title) :]
    match = _LEADING_QUESTION.match(body)
    return match.group(1).strip() if match else ""


_MODIFIERS = "maximum minimum max highest lowest usual recommended daily"
_MODIFIER_STEMS = frozenset(stem(w) for w in _MODIFIERS.split())


def topic_stems(question: str) -> frozenset[str]:
    """The question's topic: its content-word stems, without the words that state its aspect
    ("treated", "symptoms", "used for") and without generic ones ("take", "common")."""
    aspect: set[str] = set()
    for pattern in (*_QUESTION.values(), _DEFINITION_Q):
        for m in pattern.finditer(question):
            aspect.update(stem(w) for w in content_words(m.group(0)))
    if aspect:  # "maximum daily dose": how much of the aspect is asked, not what about
        aspect |= _MODIFIER_STEMS
    return frozenset(s for s in content_stems(question) if s not in aspect and s not in WEAK_STEMS)


def _on_topic_docs(hits: Sequence[Hit], topic: frozenset[str]) -> set[str] | None:
    """Keys of the documents that cover the question's topic best (title, headings and the
    retrieved text of their hits; a stem rarer among the candidate documents counts more), or
    None when no document covers any topic word (then none is singled out)."""
    if not topic:
        return None
    seen: dict[str, set[str]] = {}
    for hit in hits:
        md = hit.chunk.metadata
        path = " ".join(str(h) for h in (md.get("heading_path") or ()))
        title = str(md.get("doc_title") or md.get("title") or "")
        text = f"{title} {path} {hit.context or hit.chunk.text or ''}"
        seen.setdefault(_doc_key(hit.chunk), set()).update(content_stems(text) & topic)
    n = len(seen)
    df = {t: sum(t in found for found in seen.values()) for t in topic}
    weight = {t: math.log(1 + n / df[t]) for t in topic if df[t]}
    cover = {key: sum(weight.get(t, 0.0) for t in found) for key, found in seen.items()}
    top = max(cover.values(), default=0.0)
    if top <= 0:
        return None
    return {key for key, value in cover.items() if value >= top - 1e-9}


def matches(question_aspects_: frozenset[str], label: str) -> bool:
    return bool(question_aspects_ & label_aspects(label))


def _doc_key(chunk: Chunk) -> str:
    """What "the same document" means here: the title (flat FAQ records of one topic share it),
    else the document id."""
    md = chunk.metadata
    title = str(md.get("doc_title") or md.get("title") or "").strip().lower()
    return title or chunk.doc_id


def boost_sections(query: str, hits: Sequence[Hit], weight: float) -> list[Hit]:
    """``hits`` re-ranked with the section signal. Retrieval decides which document a question
    is about, the section signal where in it the answer is: a hit whose section label matches
    the question's aspect moves to the head of its own document's hits, at its document's best
    score plus ``weight`` × the spread of the scores (so the lift means the same on min-max,
    z-score, RRF or reranker scales). A document's matching section can thus pass the other
    documents only by that small margin, and never lifts a weakly retrieved document over a
    strong one; and only documents on the question's topic (``topic_stems``) are lifted.
    ``scores["section"]`` records the lift."""
    wanted = question_aspects(query)
    if weight <= 0 or not wanted or len(hits) < 2:
        return list(hits)
    scores = [h.score for h in hits]
    spread = max(scores) - min(scores)
    if spread <= 0:
        spread = abs(max(scores)) or 1.0
    best: dict[str, float] = {}
    for hit in hits:
        key = _doc_key(hit.chunk)
        best[key] = max(best.get(key, hit.score), hit.score)
    on_topic = _on_topic_docs(hits, topic_stems(query))
    out: list[Hit] = []
    for hit in hits:
        key = _doc_key(hit.chunk)
        if (on_topic is None or key in on_topic) and matches(wanted, section_label(hit.chunk)):
            lifted = max(hit.score, best[key]) + weight * spread
            scored = {**hit.scores, "section": lifted - hit.score}
            hit = replace(hit, score=lifted, scores=scored)
        out.append(hit)
    order = sorted(range(len(out)), key=lambda i: (-out[i].score, i))
    return [out[i] for i in order]
