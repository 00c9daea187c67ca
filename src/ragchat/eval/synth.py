"""Synthetic question sets for a user's own knowledge base (``ragchat eval synth``).

Child chunks are visited in a seeded order that takes one chunk of each document in turn, so
the sample spreads across documents; each visited chunk gets one question until ``n`` are kept:

- with a chat model (any configured backend, the local GGUF one included), the model writes
  the question (``QUESTION_PROMPT``) and is asked whether the passage answers it;
- offline the question is a *template*: a definitional sentence "X is a/the ..." becomes
  "What is X?", otherwise "What does the passage [on <heading>] say about <a, b and c>?" with
  the chunk's three most distinctive words (tf·idf over the knowledge base's chunks).
  Templated questions share their wording and quote the passage's words: they measure
  whether retrieval finds a chunk from its key terms, not paraphrase robustness.

Filters: duplicates (same normalised text, or embedding cosine > ``DUP_COSINE`` to a kept
question) and questions the chunk does not answer (its own chunk is not in the top ``TOP_K``
of the default retriever, or the model says no). The gold is the source chunk, written as
``chunk:<id>`` qrels that ``ragchat eval retrieval --qrels`` judges at chunk level.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.errors import LLMError
from ragchat.eval.chunk_units import CHUNK_PREFIX
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.reader.text import (
    GENERIC_WORDS,
    content_words,
    split_sentences,
    words,
    wordset,
)
from ragchat.types import Chunk

TOP_K = 10
DUP_COSINE = 0.95
MIN_CHUNK_WORDS = 12
PASSAGE_CHARS = 1500
QUESTION_PROMPT = (
    "Write one question that this passage answers. The question must make sense on its own, "
    "without the passage, and must not mention the passage. Reply with the question only.\n\n"
    "Passage:\n{passage}"
)
CHECK_PROMPT = (
    "Passage:\n{passage}\n\nQuestion: {question}\n\n"
    "Does the passage answer the question? Reply with yes or no only."
)
_OPTIONS = GenerationOptions(temperature=0.0, max_tokens=64)
_DEFINITION = re.compile(
    r"^(?:(?:an?|the)\s+)?(?P<x>[A-Za-z][\w'\-/]*(?:\s+[\w'\-/]+){0,4}?)\s+(?P<v>is|are)\s+"
    r"(?:an?|the|one|used|defined)\b",
    re.IGNORECASE,
)
_NOT_SUBJECT = wordset(
    """it this that these those there which what who he she they we you i here each both all
    some most many any such one"""
)

Retrieve = Callable[[str], Sequence[str]]  # question → the top ``TOP_K`` chunk ids
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class SynthQuestion:
    qid: str
    text: str
    chunk_id: str
    doc_id: str
    method: str  # "llm" or "template"


@dataclass
class SynthReport:
    requested: int
    seed: int
    candidates: int = 0
    tried: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("no_question", "duplicate", "unanswerable", "model_says_no"), 0
        )
    )
    methods: dict[str, int] = field(default_factory=dict)


def candidate_order(chunks: Sequence[Chunk], seed: int) -> list[Chunk]:
    """Every chunk with at least ``MIN_CHUNK_WORDS`` words, in a seeded order that takes one
    chunk of each document in turn (documents and chunks within one shuffled)."""
    rng = random.Random(seed)
    by_doc: dict[str, list[Chunk]] = {}
    for c in sorted(chunks, key=lambda c: (c.doc_id, c.position, c.chunk_id)):
        if len(words(c.text)) >= MIN_CHUNK_WORDS:
            by_doc.setdefault(c.doc_id, []).append(c)
    queues = [by_doc[d] for d in sorted(by_doc)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    longest = max((len(q) for q in queues), default=0)
    return [q[i] for i in range(longest) for q in queues if i < len(q)]


def document_frequencies(chunks: Sequence[Chunk]) -> tuple[Counter[str], int]:
    df: Counter[str] = Counter()
    for c in chunks:
        df.update(set(content_words(c.text)))
    return df, len(chunks)


def _subject_case(subject: str, text: str) -> str:
    first, _, rest = subject.partition(" ")
    if first[:1].isupper() and first[1:].islower() and f" {first.lower()}" in text.lower():
        first = first.lower()
    return f"{first} {rest}".strip()


def definition_question(sentence: str, text: str = "") -> str | None:
    """ "Ibuprofen is a nonsteroidal ..." → "What is Ibuprofen?"."""
    m = _DEFINITION.match(sentence.strip())
    if not m:
        return None
    subject = m.group("x").strip()
    if subject.split()[0].lower() in _NOT_SUBJECT:
        return None
    return f"What {m.group('v').lower()} {_subject_case(subject, text or sentence)}?"


def key_terms(text: str, df: Counter[str], n_docs: int, k: int = 3) -> list[str]:
    """The ``k`` words of highest tf·idf (4+ letters, not generic), in order of appearance."""
    tokens = [w for w in content_words(text) if len(w) >= 4 and w.isalpha()]
    tokens = [w for w in tokens if w not in GENERIC_WORDS]
    tf = Counter(tokens)
    score = {w: tf[w] * math.log((n_docs + 1) / (df.get(w, 0) + 1)) for w in tf}
    best = sorted(tf, key=lambda w: (-score[w], tokens.index(w)))[:k]
    return sorted(best, key=tokens.index)


def _join(terms: Sequence[str]) -> str:
    return terms[0] if len(terms) == 1 else ", ".join(terms[:-1]) + " and " + terms[-1]


def template_question(chunk: Chunk, df: Counter[str], n_docs: int) -> str | None:
    sentences = split_sentences(chunk.text, speakers=False)
    for sentence in sentences[:3]:
        question = definition_question(sentence, chunk.text)
        if question:
            return question
    md = chunk.metadata
    heading = str(md.get("heading") or (md.get("heading_path") or [""])[-1] or "").strip()
    title = str(md.get("doc_title") or "").strip()
    if heading and title and title.lower() not in heading.lower():
        heading = f"{heading} in {title}"  # "Symptoms in Migraine": headings repeat
    named = set(content_words(heading))
    terms = [t for t in key_terms(chunk.text, df, n_docs, k=3 + len(named)) if t not in named]
    if not terms:
        return None
    about = _join(terms[:3])
    if heading:
        return f"What does the passage on {heading} say about {about}?"
    return f"What does the passage say about {about}?"


def _first_question(content: str) -> str | None:
    for line in content.strip().splitlines():
        line = re.sub(r"^\s*(?:question\s*\d*\s*[:.-]\s*|[-*\d.)\s]+)", "", line, flags=re.I)
        line = line.strip().strip("\"'“”").strip()
        if line.endswith("?") and len(words(line)) >= 3:
            return line
    return None


async def llm_question(model: ChatModel, chunk: Chunk) -> str | None:
    passage = chunk.text[:PASSAGE_CHARS]
    message = Message("user", QUESTION_PROMPT.format(passage=passage))
    result = await model.generate([message], options=_OPTIONS)
    return _first_question(result.content)


async def llm_answers(model: ChatModel, chunk: Chunk, question: str) -> bool:
    prompt = CHECK_PROMPT.format(passage=chunk.text[:PASSAGE_CHARS], question=question)
    result = await model.generate([Message("user", prompt)], options=_OPTIONS)
    return result.content.strip().lower().lstrip("\"'*").startswith("yes")


def normalise(text: str) -> str:
    return " ".join(w.lower() for w in words(text))


class DuplicateFilter:
    """Same normalised text, or embedding cosine above ``threshold``, as a kept question."""

    def __init__(self, embedder: Embedder, threshold: float = DUP_COSINE) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self._texts: set[str] = set()
        self._vecs: list[np.ndarray] = []

    def is_duplicate(self, text: str) -> tuple[bool, np.ndarray | None]:
        if normalise(text) in self._texts:
            return True, None
        vec = self.embedder.embed_documents([text])[0]
        if self._vecs and float(np.max(np.stack(self._vecs) @ vec)) > self.threshold:
            return True, vec
        return False, vec

    def add(self, text: str, vec: np.ndarray) -> None:
        self._texts.add(normalise(text))
        self._vecs.append(vec)


async def synthesize(
    chunks: Sequence[Chunk],
    *,
    n: int,
    seed: int,
    embedder: Embedder,
    retrieve: Retrieve,
    model: ChatModel | None = None,
    progress: Progress | None = None,
) -> tuple[list[SynthQuestion], SynthReport]:
    """Up to ``n`` filtered questions, each with the chunk it was written from."""
    order = candidate_order(chunks, seed)
    df, n_docs = document_frequencies(chunks)
    report = SynthReport(requested=n, seed=seed, candidates=len(order))
    dups = DuplicateFilter(embedder)
    kept: list[SynthQuestion] = []
    for chunk in order:
        if len(kept) >= n:
            break
        report.tried += 1
        method, text = "template", None
        if model is not None:
            try:
                text, method = await llm_question(model, chunk), "llm"
            except LLMError:
                text = None
        text = text or template_question(chunk, df, n_docs)
        method = method if text else "template"
        if not text:
            report.dropped["no_question"] += 1
            continue
        duplicate, vec = dups.is_duplicate(text)
        if duplicate or vec is None:
            report.dropped["duplicate"] += 1
            continue
        if chunk.chunk_id not in retrieve(text):  # the top TOP_K of the retriever
            report.dropped["unanswerable"] += 1
            continue
        if model is not None and method == "llm":
            try:
                answered = await llm_answers(model, chunk, text)
            except LLMError:
                answered = True  # the retrieval check already passed
            if not answered:
                report.dropped["model_says_no"] += 1
                continue
        dups.add(text, vec)
        kept.append(SynthQuestion(f"synth-{len(kept) + 1:04d}", text, chunk.chunk_id,
                                  chunk.doc_id, method))  # fmt: skip
        report.methods[method] = report.methods.get(method, 0) + 1
        if progress is not None:
            progress("questions", len(kept), n)
    report.kept = len(kept)
    return kept, report


def write_synth(
    questions: Sequence[SynthQuestion], report: SynthReport, out_dir: Path
) -> dict[str, Path]:
    """``queries.jsonl`` ({"_id", "text"}), ``qrels.tsv`` (query-id, chunk:<id>, 1) and
    ``synth.json`` (the report and each question's source chunk and method)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {k: out_dir / k for k in ("queries.jsonl", "qrels.tsv", "synth.json")}
    paths["queries.jsonl"].write_text(
        "".join(json.dumps({"_id": q.qid, "text": q.text}) + "\n" for q in questions),
        encoding="utf-8",
    )
    rows = [f"{q.qid}\t{CHUNK_PREFIX}{q.chunk_id}\t1\n" for q in questions]
    paths["qrels.tsv"].write_text("query-id\tcorpus-id\tscore\n" + "".join(rows), "utf-8")
    meta: dict[str, Any] = {"report": asdict(report), "questions": [asdict(q) for q in questions]}
    paths["synth.json"].write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return paths
