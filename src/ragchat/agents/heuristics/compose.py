"""Extractive answers: the offline default answerer quotes the retrieved sentences that best
answer the question and cites them, instead of letting a weak local model paraphrase (and
possibly distort) medical text.

Score of a candidate sentence::

    score = W_DENSE * cos + W_LEXICAL * lex + RANK_BONUS / rank_of_its_hit
    cos   = (1 - w) * cosine(query, sentence) + w * cosine(query, context + ": " + sentence)
    lex   = (1 - w) * overlap(query, sentence) + w * overlap(query, sentence + context)

``context`` is the host's/FAQ question just before the sentence (weight ``w`` 0.5 for the
first reply, fading over ``QUESTION_REACH`` sentences) or else "doc title; heading path"
(``w`` = ``W_CONTEXT``): it resolves "it"/"Common ones include" sentences to their topic.
``overlap`` is stemmed content-word coverage of the query (generic words count
``WEAK_WEIGHT``) plus a little Jaccard. A sentence holding what the question asks for (a
number, a date, a name, a place: ``answer_types.wanted``) gains that kind's bonus, and a table
row whose band holds the user's own value (``ranges``) ``RANGE_BONUS``. The refusal checks
before and after composing are the named checks of ``reader/checks.py`` (``BEFORE``, ``AFTER``);
a refusal names the one that fired.

Topic focus: when the question names a topic (``reformulate.topic``: "acetaminophen",
"melatonin") and some hits mention it in their title, headings or text, only those hits are
quoted, so an answer about one medicine does not borrow sentences about another; when no hit
mentions a specific topic word (six letters or more), the documents do not cover the question
and the answer is NO_ANSWER.

Section focus: when the question asks about an aspect (treatment, symptoms, diagnosis, uses,
…; ``ragchat.retrieve.sections``) sentences in the section that answers it (its heading path,
or the FAQ question before them) gain ``SECTION_BONUS`` — only in the *focus document*, the one
holding the best sentence before any bonus, so another disease's Treatment section is not
quoted for this one's — and when the lead is such a sentence the rest of the focus document is
quoted from such sections too, so "What helps with hay fever?" is not answered with "Children
can have hay fever too". Another document's sentence may follow when it reaches the floor with
or without the bonus (a second FAQ record on the topic has no section label of its own). When
the focus document's title names the question's whole topic ("Ibuprofen"), other documents
are quoted only if their titles name it too. Exercise material (a "Review questions" section,
prompts such as "Give three features of …") is never a candidate
(``heuristics/candidates.py``).

Quoted sentences are cleaned: the speaker label goes (the citation names the speakers), and
a dangling opener ("So a toddler might …") is dropped. A transcript citation is narrowed to the
time range of the captions its quoted sentences come from (``quotes.narrow_citation``).

Speaker prefixes are ignored for scoring. At most ``max_embedded`` candidates (shortlisted
by overlap, matched-child sentences and hit rank) are embedded, together with their
contextualised forms, in ONE ``embed_documents`` call; an embedder with a per-chunk sentence
cache (``embed/cache.py``) embeds only the sentences it has not seen in that chunk.

Questions, headings and fragments of under ``MIN_WORDS`` words are never candidates. The best
sentence leads; the others must reach ``RELATIVE_FLOOR`` of its score and not repeat a chosen
sentence (cosine > ``DUP_COSINE`` or token Jaccard > ``DUP_JACCARD``). Sentences are then
grouped by source (the lead's source first, then retrieval order) and kept in document order
within a source, and ``[n]`` numbers the hits in order of first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragchat.agents.heuristics.reformulate import topic
from ragchat.embed.base import Embedder
from ragchat.embed.cache import embed_sentences
from ragchat.reader import ranges
from ragchat.reader.answer_types import completion, wanted
from ragchat.reader.candidates import (
    Candidate,
    candidates,
    embedding_inputs,
)
from ragchat.reader.checks import refused_after, refused_before
from ragchat.reader.coverage import (
    VOCAB_HITS,
    hit_stems,
    hit_text,
    near,
    row_values,
)
from ragchat.reader.decision import AnswerDecision, answered, refused
from ragchat.reader.quotes import narrow_citation
from ragchat.reader.text import (
    WEAK_STEMS,
    content_stems,
    stem,
    strip_inline,
    without_opener,
    words,
)
from ragchat.retrieve.sections import question_aspects, topic_stems
from ragchat.types import Citation, Hit, citation_from_hit

DEFAULT_NO_ANSWER = (
    "I couldn't find this in my documents, so I won't guess. Try rephrasing, or ask a "
    "professional who can look at your situation."
)
W_DENSE = 0.65
W_LEXICAL = 0.35
RANK_BONUS = 0.04
MIN_SENTENCE_SCORE = 0.3
RELATIVE_FLOOR = 0.75
WEAK_WEIGHT = 0.3
DUP_COSINE = 0.9
DUP_JACCARD = 0.7
MAX_EMBEDDED = 48  # candidates embedded per answer (×2 with their context)
# A table row whose band ("1 to 5 years", "less than 40 kg") holds the value the question gives.
RANGE_BONUS = 0.2
# A sentence in the section that answers the question's aspect ("how is X treated" → the
# Treatment/Management section; see ragchat.retrieve.sections) gains SECTION_BONUS, and when
# the lead sentence is in such a section the others must be too.
SECTION_BONUS = 0.2


@dataclass
class ComposedAnswer:
    text: str
    citations: list[Citation] = field(default_factory=list)
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (sentence, citation n)
    no_answer: bool = False
    answer_decision: AnswerDecision = field(default_factory=lambda: answered("rules"))


def _overlap(query_stems: set[str], sentence_stems: set[str]) -> float:
    """Mostly coverage of the query's content words (generic ones such as "take" or "common"
    count ``WEAK_WEIGHT``), a little Jaccard so long sentences do not win on coverage alone."""
    if not query_stems or not sentence_stems:
        return 0.0
    shared = query_stems & sentence_stems
    weight = {s: WEAK_WEIGHT if s in WEAK_STEMS else 1.0 for s in query_stems}
    coverage = sum(weight[s] for s in shared) / sum(weight.values())
    jaccard = len(shared) / len(query_stems | sentence_stems)
    return 0.8 * coverage + 0.2 * jaccard


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _focus(query: str, hits: Sequence[Hit], embedder: Embedder) -> tuple[set[int] | None, bool]:
    """(ranks of hits on the question's topic or None for all, whether the topic is missing
    from every hit: one of its longer words has no hit word near it in meaning, so "I forgot
    a dose" is on the topic of "If you forget a dose"). See the module docstring."""
    focus = {s for s in content_stems(topic(query)) if s not in WEAK_STEMS and "'" not in s}
    if not focus:
        return None, False
    on_topic = {i for i, hit in enumerate(hits) if focus & hit_stems(hit)}
    if on_topic:
        return on_topic, False
    long_words = [w for w in words(topic(query)) if len(stem(w)) >= 6 and stem(w) in focus]
    if not long_words:
        return None, False
    close = near(long_words, [hit_text(h) for h in hits[:VOCAB_HITS]], embedder)
    return None, len(close) < len(long_words)


def _other_row(lead: str, text: str, q_stems: set[str]) -> bool:
    """Whether ``text`` is a table row beside a lead row that holds a value of the question
    ("London"), and none of its own values is in the question."""
    lead_values, values = row_values(lead), row_values(text)
    if lead_values is None or values is None or not lead_values & q_stems:
        return False
    return not values & q_stems


def _shortlist(cands: list[Candidate], q_stems: set[str], limit: int) -> list[Candidate]:
    """At most ``limit`` candidates to embed, by a cheap pre-score: word overlap with the query
    (heading included), sentences of the matched child chunk, better-ranked hits. Keeps the
    original order so results stay deterministic."""
    if len(cands) <= limit:
        return cands

    def pre(i: int) -> float:
        c = cands[i]
        lex = _overlap(q_stems, content_stems(c.text) | content_stems(c.label))
        return lex + (0.3 if c.in_child else 0.0) + 0.2 / (c.hit_rank + 1)

    keep = sorted(range(len(cands)), key=lambda i: (-pre(i), i))[:limit]
    return [cands[i] for i in sorted(keep)]


def _score(c: Candidate, q_stems: set[str], stems: set[str], cos: float, ctx_cos: float) -> float:
    """The module docstring's score (without the number and section bonuses); sets
    ``c.lexical``."""
    lex = _overlap(q_stems, stems)
    lex_ctx = _overlap(q_stems, stems | content_stems(c.label)) if c.label else lex
    w = c.context_weight
    c.lexical = (1 - w) * lex + w * lex_ctx
    dense = (1 - w) * cos + w * ctx_cos
    return W_DENSE * dense + W_LEXICAL * c.lexical + RANK_BONUS / (c.hit_rank + 1)


def _title_stems(hit: Hit) -> set[str]:
    md = hit.chunk.metadata
    return content_stems(str(md.get("doc_title") or md.get("title") or ""))


def _title_docs(query: str, hits: Sequence[Hit], focus_doc: str) -> set[str] | None:
    """When the focus document's title names the question's whole topic ("Ibuprofen" for
    "what is ibuprofen used for"), the documents whose titles name it too; otherwise None
    (any document may be quoted). Stops "Unlike ibuprofen, it …" from the acetaminophen page
    answering a question about ibuprofen."""
    wanted = topic_stems(query)
    if not wanted:
        return None
    named = {_doc_key(h) for h in hits if wanted <= _title_stems(h)}
    return named if focus_doc in named else None


def _doc_key(hit: Hit) -> str:
    return hit.chunk.doc_id or hit.chunk.source or hit.chunk.chunk_id


def _topic(hit: Hit) -> str:
    """The closest section, as a refusal names it: "Leaflet (Pregnancy and breastfeeding)",
    "Manual (page 4)", or the title alone."""
    md = hit.chunk.metadata
    title = str(md.get("doc_title") or md.get("title") or "").strip()
    path = [str(h) for h in md.get("heading_path") or ()]
    where = path[-1] if path and path[-1] != title else ""
    where = where or (f"page {md['page']}" if "page" in md else "")
    if title:
        return f"{title} ({where})" if where else title
    if path:
        return path[-1]
    words_ = hit.chunk.text.split()[:8]
    return " ".join(words_) + ("…" if len(hit.chunk.text.split()) > 8 else "")


def _no_answer(message: str, hits: Sequence[Hit], by: str) -> ComposedAnswer:
    text = message
    if hits:
        topic = _topic(hits[0])
        if topic:
            text += f" The closest thing I found was about {topic}, which doesn't answer this."
    return ComposedAnswer(text=text, no_answer=True, answer_decision=refused(by))


def _with_marker(sentence: str, n: int) -> str:
    """``"… 24 hours [1]."``: the marker goes inside the sentence's final punctuation."""
    stripped = sentence.rstrip()
    if stripped and stripped[-1] in ".!":
        return f"{stripped[:-1]} [{n}]{stripped[-1]}"
    return f"{stripped} [{n}]"


def compose_answer(
    query: str,
    hits: Sequence[Hit],
    embedder: Embedder,
    *,
    max_sentences: int = 4,
    disclaimer: str = "",
    no_answer: bool = False,
    no_answer_message: str = DEFAULT_NO_ANSWER,
    min_sentence_score: float = MIN_SENTENCE_SCORE,
    relative_floor: float = RELATIVE_FLOOR,
    max_embedded: int = MAX_EMBEDDED,
    require_topic: bool = True,
) -> ComposedAnswer:
    """An extractive, cited answer to ``query`` from ``hits`` (best first). See the module
    docstring for the scoring; deterministic for a deterministic embedder. ``require_topic``
    False skips the topic-coverage refusal: when the caller chose the passage (selected-text
    mode), it is the context by definition."""
    if no_answer or not hits or max_sentences < 1:
        return _no_answer(no_answer_message, hits, "gate" if no_answer else "no passages")
    allowed, uncovered = _focus(query, hits, embedder)
    if uncovered and require_topic:
        return _no_answer(no_answer_message, hits, "check:focus_missing")
    fired = refused_before(query, hits, embedder) if require_topic else None
    if fired is not None:
        return _no_answer(no_answer_message, hits, f"check:{fired}")
    cands = candidates(hits, allowed, question_aspects(query))
    if not cands and not require_topic:
        # A chosen passage too short to hold a sentence (a list item, a phrase) is quoted whole.
        cands = [
            Candidate(" ".join(strip_inline(h.context or h.chunk.text).split()), rank, 0)
            for rank, h in enumerate(hits)
            if (h.context or h.chunk.text).strip()
        ]
    if not cands:
        return _no_answer(no_answer_message, hits, "nothing quotable")

    q_stems = content_stems(query)
    cands = _shortlist(cands, q_stems, max_embedded)
    with_ctx, plain, owners, texts = embedding_inputs(cands, hits)
    query_vec = np.asarray(embedder.embed_query(query), dtype=np.float32)
    vecs = embed_sentences(embedder, owners, texts)  # cached per chunk: see embed/cache.py
    sent_vecs = vecs[: len(cands)]
    dense = sent_vecs @ query_vec
    ctx_dense = dense.copy()
    ctx_dense[with_ctx] = vecs[len(cands) :] @ query_vec
    stems = [content_stems(t) for t in plain]
    scored = [
        _score(c, q_stems, stems[i], float(dense[i]), float(ctx_dense[i]))
        for i, c in enumerate(cands)
    ]
    want = wanted(query)
    asked = ranges.values(query)  # "I've worked here 2 years": the "1 to 5 years" row
    for i, c in enumerate(cands):
        c.base = scored[i] + (want.bonus if want.holds(plain[i]) else 0.0)
        if asked and row_values(plain[i]) is not None and ranges.holds(plain[i], asked):
            c.base += RANGE_BONUS
    focus_doc = _doc_key(hits[cands[max(range(len(cands)), key=lambda i: cands[i].base)].hit_rank])
    for c in cands:
        on_focus = _doc_key(hits[c.hit_rank]) == focus_doc
        c.on_aspect = c.on_aspect and on_focus  # the section lift stays inside one document
        c.score = c.base + (SECTION_BONUS if c.on_aspect else 0.0)
    allowed_docs = _title_docs(query, hits, focus_doc)

    ranking = sorted(range(len(cands)), key=lambda i: (-cands[i].score, i))
    best = cands[ranking[0]].score
    if best < min_sentence_score:
        return _no_answer(no_answer_message, hits, "check:below_floor")
    # A sentence may follow the lead when it reaches the floor with its bonus or, as the
    # answer of another record (no section label of its own), without it.
    floor = max(min_sentence_score, relative_floor * best)
    base_floor = max(min_sentence_score, relative_floor * max(c.base for c in cands))

    chosen: list[int] = []
    for i in ranking:
        if len(chosen) >= max_sentences:
            break
        c = cands[i]
        doc = _doc_key(hits[c.hit_rank])
        if chosen and c.score < floor and c.base < base_floor:
            continue
        if chosen and allowed_docs is not None and doc not in allowed_docs:
            continue  # the focus document is the topic; other documents only when named alike
        if chosen and cands[chosen[0]].on_aspect and doc == focus_doc and not c.on_aspect:
            continue  # the lead is in the section that answers: the rest of it comes from there
        if chosen and _other_row(plain[chosen[0]], plain[i], q_stems):
            continue  # the lead is the table row asked about; its neighbours are not
        duplicate = any(
            float(sent_vecs[i] @ sent_vecs[j]) > DUP_COSINE
            or _jaccard(stems[i], stems[j]) > DUP_JACCARD
            for j in chosen
        )
        if not duplicate:
            chosen.append(i)

    # The lead, and the sentences that complete it (answer_types.completion), quoted first.
    leading = [chosen[0], *completion(cands, plain, chosen[0], want)][:max_sentences]
    chosen = [*leading, *(i for i in chosen if i not in leading)][:max_sentences]
    fired = (
        refused_after(query, [plain[i] for i in chosen], [cands[i].label for i in chosen], embedder)
        if require_topic
        else None
    )
    if fired is not None:
        return _no_answer(no_answer_message, hits, f"check:{fired}")
    lead = chosen[0]
    lead_doc = _doc_key(hits[cands[lead].hit_rank])
    doc_order: dict[str, int] = {}
    for hit in hits:
        doc_order.setdefault(_doc_key(hit), len(doc_order))

    def place(i: int) -> tuple[int, int, int, int, int]:
        c = cands[i]
        hit = hits[c.hit_rank]
        doc = _doc_key(hit)
        return (
            0 if doc == lead_doc else 1 + doc_order[doc],
            leading.index(i) if i in leading else len(leading),
            hit.chunk.position,
            c.hit_rank,
            c.order,
        )

    ordered = sorted(chosen, key=place)
    numbers: dict[int, int] = {}
    citations: list[Citation] = []
    sentences: list[tuple[str, int]] = []
    quoted: dict[int, list[str]] = {}
    for i in ordered:
        rank = cands[i].hit_rank
        if rank not in numbers:
            numbers[rank] = len(numbers) + 1
            citations.append(citation_from_hit(hits[rank], numbers[rank]))
        sentences.append((without_opener(plain[i], lead=not sentences), numbers[rank]))
        quoted.setdefault(rank, []).append(plain[i])
    citations = [
        narrow_citation(c, hits[rank], quoted[rank])
        for c, rank in zip(citations, numbers, strict=True)
    ]

    text = " ".join(_with_marker(s, n) for s, n in sentences)
    if disclaimer.strip():
        text += "\n\n" + disclaimer.strip()
    return ComposedAnswer(text=text, citations=citations, sentences=sentences, no_answer=False)
