"""Reading the retrieved passages for one question: their candidate sentences and rows, each
one's features, the question-level signals, and — with a model — each candidate's probability
of answering and the probability that the passages answer at all. Training (``dataset``) and
answering (``compose``) prepare candidates through the same function, so the model sees at
run time exactly what it was trained on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragchat.embed.base import Embedder
from ragchat.embed.cache import embed_sentences
from ragchat.reader.candidates import Candidate, candidates, embedding_inputs
from ragchat.reader.features import FEATURES, Inputs, features
from ragchat.reader.head import NONE, UNKNOWN, head_signals
from ragchat.reader.model import ReaderModel
from ragchat.reader.question import Question
from ragchat.reader.refusal import refusal_features
from ragchat.reader.signals import LEAD_SIGNALS, lead_signals, passage_signals
from ragchat.types import Hit


@dataclass(frozen=True)
class Prepared:
    question: Question
    hits: tuple[Hit, ...]
    cands: tuple[Candidate, ...]
    plain: tuple[str, ...]  # each candidate's text as quoted (speaker label removed)
    x: np.ndarray  # (candidates, FEATURES)
    passage: np.ndarray  # PASSAGE_SIGNALS
    vectors: np.ndarray | None = None  # candidate vectors (duplicates, the head), None: empty
    query_vector: np.ndarray | None = None


@dataclass(frozen=True)
class Reading:
    prepared: Prepared
    probs: np.ndarray  # P(answers) per candidate
    answerable: float  # P(the passages answer the question)
    lead: int  # index of the best candidate, -1 when there is none


def prepare(
    question: Question, hits: Sequence[Hit], embedder: Embedder, *, query_vector: np.ndarray
) -> Prepared:
    """Candidates and features; ``query_vector`` is the question's embedding (computed once
    per turn by the caller)."""
    hits = tuple(hits)
    passage = passage_signals(question, hits, embedder)
    cands = candidates(hits)
    if not cands:
        empty = np.zeros((0, len(FEATURES)), dtype=np.float32)
        return Prepared(question, hits, (), (), empty, passage, query_vector=query_vector)
    with_ctx, plain, owners, texts = embedding_inputs(cands, hits)
    vecs = embed_sentences(embedder, owners, texts)
    qv = np.asarray(query_vector, dtype=np.float32)
    cos = vecs[: len(cands)] @ qv
    ctx = cos.copy()
    ctx[with_ctx] = vecs[len(cands) :] @ qv
    x = features(question, Inputs(cands, plain, hits, cos, ctx))
    return Prepared(question, hits, tuple(cands), tuple(plain), x, passage, vecs[: len(cands)], qv)


def read(prepared: Prepared, model: ReaderModel, embedder: Embedder | None) -> Reading:
    probs = model.candidates(prepared.x)
    if len(probs) == 0:
        row = refusal_features(
            probs, prepared.x, prepared.passage, np.zeros(len(LEAD_SIGNALS), np.float32), NONE
        )
        return Reading(prepared, probs, float(model.answerable(row[None])[0]), -1)
    lead = int(np.argmax(probs))
    signals = lead_signals(
        prepared.question, prepared.plain[lead], prepared.cands[lead].label, embedder
    )
    agree = UNKNOWN
    qv, vectors = prepared.query_vector, prepared.vectors
    if model.head.applies(embedder) and qv is not None and vectors is not None:
        agree = head_signals(model.head.scores(qv, vectors), probs)
    row = refusal_features(probs, prepared.x, prepared.passage, signals, agree)
    return Reading(prepared, probs, float(model.answerable(row[None])[0]), lead)
