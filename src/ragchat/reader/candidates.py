"""Candidate sentences of the extractive composer: which sentences of the retrieved passages
could be quoted, with the context (FAQ/host question or "title; heading") that resolves them,
whether they sit in the section that answers the question's aspect, and the per-chunk
embedding inputs shared with the start-up prewarm."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragchat.embed.base import Embedder
from ragchat.embed.cache import embed_sentences
from ragchat.reader.text import segment, strip_inline, strip_speaker, words
from ragchat.retrieve.sections import label_aspects
from ragchat.types import Hit

MIN_WORDS = 5
# Formats whose lines are paragraphs (bullets, Word and web paragraphs, rows), not hard wraps.
PARAGRAPH_SUFFIXES = frozenset(
    {".docx", ".pptx", ".html", ".htm", ".xhtml", ".epub", ".xlsx", ".xlsm", ".csv", ".tsv"}
)
MAX_CANDIDATES = 240
MAX_PER_HIT = 60
# A short sentence that states something ("Alcohol is not reimbursed.", "Receipts are
# required."): the verdict a yes/no question wants, not a heading or a spoken fragment.
_STATES = re.compile(
    r"\b(?:is|are|was|were|must|may|can|cannot|can't|should|will|won't|do|does|don't"
    r"|doesn't|not|never|has|have|had)\b",
    re.IGNORECASE,
)


def _short_sentence(text: str) -> bool:
    return (
        len(words(text)) >= 3 and text.rstrip().endswith((".", "!")) and bool(_STATES.search(text))
    )


_PRONOUN_START = re.compile(r"^(?:she|he|they|her|his|their)\b", re.IGNORECASE)
_NAME_RUN = re.compile(r"(?<=\S )[A-Z][a-z]+(?: [A-Z][a-z]+)*")


def _names(sentence: str) -> str:
    """The names inside a sentence (capitalised words not opening it): "Gloria Mendes"."""
    return ", ".join(dict.fromkeys(_NAME_RUN.findall(sentence)))


# Chit-chat in transcripts: "Maya Chen: Let's talk about ...", "Thanks for having me".
_FILLER = re.compile(
    r"^(?:[A-Z][\w.' -]{0,40}:\s+)?(?:let's|let us|welcome|thanks|thank you|now, the|okay|ok,)\b",
    re.IGNORECASE,
)
W_CONTEXT = 0.5
QUESTION_REACH = 3
LEAD_IN_REACH = 2  # sentences after a short lead-in fragment that it labels
# Exercise material asks, it does not answer: "Review questions", "Exercises", "Quiz".
_EXERCISE_HEADING = re.compile(
    r"\b(review questions?|questions for review|exercises?|quiz|self[- ]test|test yourself"
    r"|check your understanding|practice questions?|discussion questions?)\b",
    re.IGNORECASE,
)
# "Give three features of …", "Explain how …": an exercise prompt, not an answer.
_PROMPT = re.compile(
    r"^(list|give|explain|describe|name|compare|contrast|define|outline|state|identify"
    r"|discuss|suggest|predict|calculate|sketch|draw|label|trace|summari[sz]e)\b",
    re.IGNORECASE,
)


# "Bile – a liver secretion …": a glossary entry, which reads as a label, not a sentence.
_GLOSS = re.compile(r"^([A-Z][\w'’ -]{0,40}?)\s+[–—]\s+(\S.*)$")
_ARTICLE = re.compile(r"^(?:a|an|the|one)\b", re.IGNORECASE)


def gloss_sentence(text: str) -> str:
    """A glossary entry as a sentence: "Bile – a liver secretion …" → "Bile is a liver
    secretion …", "Emulsify – to break …" → "Emulsify means to break …", "Denatured –
    describes …" → "Denatured describes …"; anything else unchanged."""
    m = _GLOSS.match(text)
    if m is None or len(m.group(1).split()) > 4:
        return text
    term, rest = m.group(1), m.group(2)
    head = rest.split()
    if len(head) < 4:
        return text
    if _ARTICLE.match(rest):
        return f"{term} is {rest}"
    if head[0].islower() and head[0].endswith("s") and _ARTICLE.match(head[1]):
        return f"{term} {rest}"  # "describes an enzyme …"
    return f"{term} means {rest}"


_CODE = re.compile(r"^[A-Z]{1,3}-?\d{1,4}\b")


def _row_heading(heading: str, section_headings: set[str]) -> bool:
    """A short line taken for a heading that starts with a code, under no real section heading
    of its own: a table row's first cells ("E10 No water coming in")."""
    return (
        bool(heading)
        and heading not in section_headings
        and len(heading.split()) <= 8
        and bool(_CODE.match(heading))
    )


@dataclass
class Candidate:
    text: str
    hit_rank: int  # 0-based index into hits
    order: int  # sentence index within its hit's text
    label: str = ""  # preceding question or heading, "" when none
    context_weight: float = 0.0  # how much the label counts, see W_CONTEXT
    in_child: bool = False  # inside the matched child chunk, not just its parent context
    on_aspect: bool = False  # in the section that answers the question's aspect
    score: float = 0.0
    base: float = 0.0  # score before the section bonus
    lexical: float = 0.0
    heading: str = ""  # the heading it sits under (its section), "" when none


def candidates(
    hits: Sequence[Hit], allowed: set[int] | None = None, aspects: frozenset[str] = frozenset()
) -> list[Candidate]:
    """Answer-like sentences of every hit, each with its context: the question just before it
    (a host's question in a transcript, an FAQ entry) or else "doc title; heading". Sentences
    of exercise sections and exercise prompts are not candidates."""
    seen: set[str] = set()
    out: list[Candidate] = []
    for rank, hit in enumerate(hits):
        if allowed is not None and rank not in allowed:
            continue
        md = hit.chunk.metadata
        title = str(md.get("doc_title") or md.get("title") or "")
        fallback = str(md.get("heading") or "")
        path = " > ".join(str(h) for h in (md.get("heading_path") or ()) if str(h) != title)
        question, since_question = "", QUESTION_REACH + 1
        per_hit = 0
        child = " ".join(strip_inline(hit.chunk.text or "").split())
        headings = {fallback, title, *(str(h) for h in md.get("heading_path") or ())}
        last_heading = ""
        # A fragment too short to answer ("Tom: Finally the compost workshop.") is the topic of
        # what follows it ("I have asked Mrs Okafor … to lead it"): their label, not a quote.
        lead_in, since_lead_in = "", LEAD_IN_REACH + 1
        antecedent = ""  # names of the last sentence not opening with "she"/"they": whom they mean
        paragraphs = None
        if Path(hit.chunk.source.split("#", 1)[0]).suffix.lower() in PARAGRAPH_SUFFIXES:
            paragraphs = frozenset(
                [*headings, str(md.get("slide_title") or ""), str(md.get("chapter_title") or "")]
            )
        for order, piece in enumerate(segment(hit.context or hit.chunk.text or "", paragraphs)):
            first_under, last_heading = piece.heading != last_heading, piece.heading
            if piece.is_question:
                question, since_question = piece.text, 0
                continue
            piece = dataclasses.replace(piece, text=gloss_sentence(piece.text))
            if first_under and _row_heading(piece.heading, headings):
                # "E10 No water coming in" over "Check that the tap is open …": a table row
                # the PDF text split in two; the answer needs both halves.
                piece = dataclasses.replace(piece, text=f"{piece.heading} — {piece.text}")
            since_question += 1
            since_lead_in += 1
            key = " ".join(w.lower() for w in words(piece.text))
            if _FILLER.match(piece.text):
                continue
            said = strip_speaker(piece.text)
            if len(words(said)) < MIN_WORDS and not _short_sentence(said):
                lead_in, since_lead_in = said.rstrip(".!;:"), 0
                continue
            if key in seen:
                continue
            if _PROMPT.match(piece.text) or _EXERCISE_HEADING.search(
                f"{path} {piece.heading or fallback}"
            ):
                continue
            seen.add(key)
            weight = W_CONTEXT
            if since_question <= QUESTION_REACH:
                label = question
                weight = W_CONTEXT * (1.2 - 0.2 * since_question)  # nearest reply counts most
            else:
                heading = piece.heading or fallback
                if path and heading == fallback:
                    heading = path
                topic = lead_in if since_lead_in <= LEAD_IN_REACH else ""
                label = "; ".join(x for x in dict.fromkeys((title, heading, topic)) if x)
            pronoun = _PRONOUN_START.match(said) is not None
            if antecedent and pronoun:
                label = f"{label}; {antecedent}" if label else antecedent  # "She'll bring …"
            in_child = " ".join(piece.text.split()[:6]) in child
            section = (
                question
                if since_question <= QUESTION_REACH
                else f"{path} {piece.heading or fallback}"
            )
            on_aspect = bool(aspects & label_aspects(section))
            if not pronoun:
                antecedent = _names(said) or antecedent
            out.append(
                Candidate(
                    piece.text,
                    rank,
                    order,
                    label,
                    weight if label else 0.0,
                    in_child,
                    on_aspect,
                    heading=piece.heading or fallback,
                )
            )
            per_hit += 1
            if len(out) >= MAX_CANDIDATES:
                return out
            if per_hit >= MAX_PER_HIT:
                break
    return out


def owner(hit: Hit) -> str:
    """The chunk a candidate's text comes from: the parent whose text is the context."""
    return hit.chunk.parent_id or hit.chunk.chunk_id


def embedding_inputs(
    cands: Sequence[Candidate], hits: Sequence[Hit]
) -> tuple[list[int], list[str], list[str], list[str]]:
    """(candidates with a label, their speaker-free texts, the owner chunk and the text of
    every vector to embed: the plain sentences, then the labelled forms)."""
    with_ctx = [i for i, c in enumerate(cands) if c.label]
    plain = [strip_speaker(c.text) for c in cands]
    texts = plain + [f"{cands[i].label}: {plain[i]}" for i in with_ctx]
    owners = [owner(hits[c.hit_rank]) for c in cands]
    owners += [owners[i] for i in with_ctx]
    return with_ctx, plain, owners, texts


def warm_sentences(hits: Sequence[Hit], embedder: Embedder, *, batch: int = 32) -> int:
    """Embeds every sentence ``compose_answer`` could quote from ``hits`` (each hit alone, so
    none is skipped as a repeat of another) into the embedder's per-chunk cache, so a later
    answer from these passages embeds only its question; ``batch`` texts per call, so live
    turns are not stuck behind one long model call. Returns the number of texts."""
    count = 0
    for hit in hits:
        cands = candidates([hit])
        if cands:
            _, _, owners, texts = embedding_inputs(cands, [hit])
            for i in range(0, len(texts), batch):
                embed_sentences(embedder, owners[i : i + batch], texts[i : i + batch])
            count += len(texts)
    return count
