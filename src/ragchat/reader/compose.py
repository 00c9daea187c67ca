"""The offline answer from a reading: refuse when the passages do not answer (one calibrated
probability under the threshold chosen on val), else quote the lead candidate and those the
model rates near it — with the sentences around a prose lead, the exchange around a
transcript line, unless the lead answers by itself — in document order, cited: a transcript
citation narrowed to the captions quoted, a table citation to the rows quoted."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.reader.answer_types import Wanted
from ragchat.reader.decision import AnswerDecision, answered, refused
from ragchat.reader.features import INDEX
from ragchat.reader.model import Choices, ReaderModel
from ragchat.reader.question import analyse
from ragchat.reader.quotes import hit_cues, narrow_citation
from ragchat.reader.read import Prepared, Reading, prepare, read
from ragchat.reader.text import segment, strip_speaker, without_opener
from ragchat.types import Citation, Hit, citation_from_hit

DUP_COSINE = 0.9
# A spoken answer often comes a line after the one that names its topic ("I'd like a weekly
# site meeting." → "Thursdays at eight, before the lads get going?"), in words too short, or
# asked back as a question, to be a candidate of its own; or a line before it, where the
# question was answered before the topic was named again: a transcript lead is quoted with
# the sentences around it in its passage (``_exchange``).
TRANSCRIPT_BEFORE = 1
TRANSCRIPT_FOLLOW = 3
# A lead that holds what the question asks for ("Who is the race officer?" → "The race officer
# will be Helen Park.") or that the scorer is this sure of answers by itself: quoted alone
# (``_answers_alone``), without the exchange of a transcript line or the sentences around a
# prose lead. For transcripts, cited to its own cue; the corpus's transcript questions, key
# facts / right place: train 75.0/75.0% (76.5/78.0% quoting every lead's exchange), val
# 51.3/56.4% (the same); a probability gate alone at 0.7 lost val questions (48.7/53.8%).
ANSWERS_ALONE = 0.9
# A prose lead that does not answer by itself is quoted with the candidate sentence just before
# and the one just after it under its heading: the fact is often a sentence away from the one
# the scorer rates best ("If blood soaks through, put a second pad on top of the first." /
# "Do not remove the first pad."). Simulated over the retrieved passages of the corpus's
# answerable questions (``benchmarks/reader_around.py``; train out of fold), key facts / words
# per reply: without, train 73.7% / 34, val 69.3% / 31; the next sentence 75.9% / 39,
# 71.5% / 36; before and after 77.0% / 45, 72.5% / 42. Only candidates are quoted: a sentence
# too short to be one ("Call 999.") is not.
PROSE_AROUND = 1
# A sentence from another section than the lead's joins only when the model rates it at least
# this share of the lead ("How is it treated?" quotes the treatment, not the definition too).
OTHER_SECTION = 0.5


@dataclass
class Reply:
    text: str
    citations: list[Citation] = field(default_factory=list)
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (sentence, citation n)
    no_answer: bool = False
    answer_decision: AnswerDecision = field(default_factory=lambda: answered("reader"))


def closest(hit: Hit) -> str:
    """The closest section, as a refusal names it: "Leaflet (Pregnancy)", "Manual (page 4)",
    "Timetable (slide 3)", or the title alone."""
    md = hit.chunk.metadata
    title = str(md.get("doc_title") or md.get("title") or "").strip()
    path = [str(h) for h in md.get("heading_path") or ()]
    where = path[-1] if path and path[-1] != title else ""
    if not where:
        for key, label in (("page", "page"), ("slide", "slide"), ("sheet", "sheet")):
            if key in md:
                where = f"{label} {md[key]}"
                break
    if title:
        return f"{title} ({where})" if where else title
    return path[-1] if path else " ".join(hit.chunk.text.split()[:8])


def refusal(message: str, hits: Sequence[Hit], decision: AnswerDecision) -> Reply:
    text = message
    if hits:
        near = closest(hits[0])
        text += f" The closest thing I found was about {near}, which doesn't answer this."
    return Reply(text=text, no_answer=True, answer_decision=decision)


def _with_marker(sentence: str, n: int) -> str:
    stripped = sentence.rstrip()
    if stripped and stripped[-1] in ".!":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def choose(reading: Reading, choices: Choices) -> list[int]:
    """The lead, then the candidates the model rates at least ``relative`` × the lead's and
    ``floor``, from the lead's document, not repeating a chosen one, best first, at most
    ``max_sentences``; then the sentence naming a pronoun lead's subject and, unless the lead
    answers by itself, the sentences beside a prose lead (so up to ``max_sentences`` + 3)."""
    probs = reading.probs
    prepared = reading.prepared
    if reading.lead < 0:
        return []
    lead = reading.lead
    lead_doc = _doc(prepared.hits[prepared.cands[lead].hit_rank])
    lead_section = _section(prepared, lead)
    keep = [lead]
    floor = max(choices.floor, choices.relative * float(probs[lead]))
    vectors = prepared.vectors
    for i in np.argsort(-probs, kind="stable")[1:]:
        i = int(i)
        if len(keep) >= choices.max_sentences or probs[i] < floor:
            break
        if _doc(prepared.hits[prepared.cands[i].hit_rank]) != lead_doc:
            continue
        if _section(prepared, i) != lead_section and probs[i] < OTHER_SECTION * probs[lead]:
            continue
        if not _repeats(vectors, i, keep):
            keep.append(i)
    subject = _subject_of(prepared, lead)
    if subject is not None and subject not in keep:
        keep.append(subject)
    if not _answers_alone(reading, lead):
        keep += [
            i for i in _beside(prepared, lead) if i not in keep and not _repeats(vectors, i, keep)
        ]
    return keep


def _repeats(vectors: np.ndarray | None, i: int, keep: Sequence[int]) -> bool:
    return vectors is not None and any(float(vectors[i] @ vectors[j]) > DUP_COSINE for j in keep)


def _beside(prepared: Prepared, lead: int) -> list[int]:
    """The candidates just before and after the lead under its heading in its passage
    (``PROSE_AROUND``); none for a table row, whose neighbours are other records. (A
    transcript line's neighbours are inside its exchange, ``_exchange``.)"""
    cand = prepared.cands[lead]
    if _is_row(prepared, lead):
        return []
    return [
        i
        for i, c in enumerate(prepared.cands)
        if c.hit_rank == cand.hit_rank
        and c.heading == cand.heading
        and 0 < abs(c.order - cand.order) <= PROSE_AROUND
        and not _is_row(prepared, i)
    ]


def _is_row(prepared: Prepared, i: int) -> bool:
    return bool(prepared.x[i, INDEX["is_row"]] > 0)


# A lead that opens with a pronoun ("It reduces …") reads as an answer only with the sentence
# that names its subject.
_PRONOUN = re.compile(r"^(?:it|its|they|their|this|these|those|he|she|his|her)\b", re.IGNORECASE)
SUBJECT_LOOKBACK = 3


def _subject_of(prepared: Prepared, lead: int) -> int | None:
    """The nearest earlier sentence of the lead's section that does not itself open with a
    pronoun, when the lead does."""
    cand = prepared.cands[lead]
    if not _PRONOUN.match(prepared.plain[lead]):
        return None
    before = [
        (c.order, i)
        for i, c in enumerate(prepared.cands)
        if c.hit_rank == cand.hit_rank
        and c.heading == cand.heading
        and cand.order - SUBJECT_LOOKBACK <= c.order < cand.order
    ]
    for _, i in sorted(before, reverse=True):
        if not _PRONOUN.match(prepared.plain[i]):
            return i
    return None


def _section(prepared: Prepared, i: int) -> tuple[str, ...]:
    """The top of the heading path a candidate's passage sits under: a section's passages
    and subsections ("Treatment > Antihistamines", "Treatment > Nasal sprays") are one."""
    hit = prepared.hits[prepared.cands[i].hit_rank]
    return tuple(str(h) for h in hit.chunk.metadata.get("heading_path") or ())[:2]


def _doc(hit: Hit) -> str:
    return hit.chunk.doc_id or hit.chunk.source or hit.chunk.chunk_id


def reply(reading: Reading, chosen: Sequence[int], disclaimer: str = "") -> Reply:
    """The chosen candidates quoted in document order and cited ([n] in order of first use)."""
    prepared = reading.prepared
    cands, hits = prepared.cands, prepared.hits

    # Sections in the order of their best chosen sentence (the lead's first), sentences of a
    # section in document order: the answering section is cited [1]. Table rows are records,
    # not a text read in order: the best row comes first ("the 14 March ride" is not preceded
    # by the 7 March row above it).
    rank_of: dict[tuple[int, str], int] = {}
    for n, i in enumerate(chosen):
        rank_of.setdefault((cands[i].hit_rank, cands[i].heading), n)
    best_first = {i: n for n, i in enumerate(chosen)}

    def place(i: int) -> tuple[int, int, int]:
        c = cands[i]
        first = rank_of[(c.hit_rank, c.heading)]  # the section's best chosen
        within = best_first[i] if _is_row(prepared, chosen[first]) else c.order
        return (first, hits[c.hit_rank].chunk.position, within)

    numbers: dict[int, int] = {}
    citations: list[Citation] = []
    sentences: list[tuple[str, int]] = []
    quoted: dict[int, list[str]] = {}
    sure = not chosen or _answers_alone(reading, chosen[0])
    exchange, within = ([], set()) if sure else _exchange(prepared, chosen[0], chosen)
    for i in sorted(chosen, key=place):
        if i in within and i != chosen[0]:
            continue  # quoted in the lead's exchange
        rank = cands[i].hit_rank
        if rank not in numbers:
            numbers[rank] = len(numbers) + 1
            citations.append(citation_from_hit(hits[rank], numbers[rank]))
        said = exchange if i == chosen[0] and exchange else [prepared.plain[i]]
        # An exchange is quoted as one passage with one marker, not a marker per line.
        text = " ".join(t.strip() for t in said)
        sentences.append((without_opener(text, lead=not sentences), numbers[rank]))
        quoted.setdefault(rank, []).extend(said)
    citations = [
        narrow_citation(c, hits[rank], quoted[rank])
        for c, rank in zip(citations, numbers, strict=True)
    ]
    text = " ".join(_with_marker(s, n) for s, n in sentences)
    if disclaimer.strip():
        text += "\n\n" + disclaimer.strip()
    return Reply(text, citations, sentences, answer_decision=answered("reader", reading.answerable))


def _answers_alone(reading: Reading, lead: int) -> bool:
    prepared = reading.prepared
    return answers_alone(prepared.question.wanted, prepared.plain[lead], float(reading.probs[lead]))


def answers_alone(want: Wanted, lead: str, probability: float) -> bool:
    """The lead holds what the question asks for (a name for "who", a date for "when", a
    number for "how much") or the scorer is ``ANSWERS_ALONE`` sure of it (``probability``):
    quoted without the sentences around it (also what ``benchmarks/reader_around.py``
    simulates)."""
    return want.holds(lead) or probability >= ANSWERS_ALONE


def _exchange(prepared: Prepared, lead: int, chosen: Sequence[int]) -> tuple[list[str], set[int]]:
    """A transcript lead's exchange: the ``TRANSCRIPT_BEFORE`` sentences before it and the
    ``TRANSCRIPT_FOLLOW`` after it in its passage, in order, and the chosen candidates it
    takes in (quoted there, not again). Empty for a passage without captions. On the corpus's
    transcript questions (vtt), key facts / right place with 0, 2, 3, 4 sentences after:
    train 67.4/66.7, 70.5/69.7, 73.5/74.2, 75.0/75.8%; val 33.3/38.5, 46.2/48.7, 48.7/53.8,
    53.8/53.8%; one before and three after: train 76.5/78.0%, val 51.3/56.4%."""
    cand = prepared.cands[lead]
    hit = prepared.hits[cand.hit_rank]
    if not hit_cues(hit):
        return [], set()
    pieces = segment(hit.context or hit.chunk.text or "")
    first = max(0, cand.order - TRANSCRIPT_BEFORE)
    last = min(len(pieces), cand.order + 1 + TRANSCRIPT_FOLLOW)
    by_order = {
        prepared.cands[i].order: i for i in chosen if prepared.cands[i].hit_rank == cand.hit_rank
    }
    by_order[cand.order] = lead
    texts = [
        prepared.plain[by_order[k]] if k in by_order else strip_speaker(pieces[k].text)
        for k in range(first, last)
    ]
    return texts, {i for k, i in by_order.items() if first <= k < last}


def _whole(hit: Hit, disclaimer: str) -> Reply:
    """The passage the caller chose, quoted whole ("indigestion, heartburn, nausea or stomach
    pain" selected on the page holds no sentence to pick)."""
    quoted = " ".join((hit.context or hit.chunk.text).split())
    text = _with_marker(quoted, 1)
    if disclaimer.strip():
        text += "\n\n" + disclaimer.strip()
    cited = [citation_from_hit(hit, 1)]
    return Reply(text, cited, [(quoted, 1)], answer_decision=answered("selection"))


def _reading(
    query: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    model: ReaderModel,
    message: str | None,
    previous: str,
    query_vector: np.ndarray | None = None,
) -> Reading:
    question = analyse(query, message, previous)
    qv = query_vector if query_vector is not None else embedder.embed_query(query)
    return read(prepare(question, hits, embedder, query_vector=np.asarray(qv)), model, embedder)


def answer(
    query: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    model: ReaderModel,
    *,
    message: str | None = None,
    previous: str = "",
    no_answer_message: str,
    disclaimer: str = "",
    require_answerable: bool = True,
    query_vector: np.ndarray | None = None,
) -> Reply:
    """The offline reply to ``query`` from ``hits``. ``require_answerable`` False quotes the
    best candidates whatever the refusal model says (the caller chose the passage)."""
    if not hits:
        return refusal(no_answer_message, hits, refused("no passages"))
    reading = _reading(query, hits, embedder, model, message, previous, query_vector)
    choices = model.card.choices
    figures = (reading.answerable, choices.threshold)
    if require_answerable and reading.answerable < choices.threshold:
        return refusal(no_answer_message, hits, refused("reader", *figures))
    chosen = choose(reading, choices)
    if not chosen and not require_answerable:
        return _whole(hits[0], disclaimer)  # a selection too short to hold a sentence
    if not chosen:
        return refusal(no_answer_message, hits, refused("nothing quotable", *figures))
    by = "reader" if require_answerable else "selection"
    return replace(reply(reading, chosen, disclaimer), answer_decision=answered(by, *figures))


@dataclass(frozen=True)
class Ranked:
    """The passages in the order the reader rates them (each by its best candidate) and the
    probability that they answer: what decides whether a chat model is asked at all, and what
    it reads first."""

    hits: tuple[Hit, ...]
    answerable: float
    threshold: float

    @property
    def answers(self) -> bool:
        return self.answerable >= self.threshold


def rank(
    query: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    model: ReaderModel,
    *,
    message: str | None = None,
    previous: str = "",
) -> Ranked:
    reading = _reading(query, hits, embedder, model, message, previous)
    best = np.full(len(hits), -1.0)
    for c, p in zip(reading.prepared.cands, reading.probs, strict=True):
        best[c.hit_rank] = max(best[c.hit_rank], float(p))
    order = sorted(range(len(hits)), key=lambda i: (-best[i], i))
    return Ranked(tuple(hits[i] for i in order), reading.answerable, model.card.choices.threshold)
