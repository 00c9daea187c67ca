"""The signals the answer scorer reads for each candidate sentence or table row: how close it
is to the question in meaning and in words (the rare words most), where it sits (its heading,
its passage's rank), whether it holds what kind of answer was asked, and how it compares with
the other candidates of the same question. Robust signals rather than word lists: each is a
number a model weighs, learned from many documents."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragchat.reader import ranges
from ragchat.reader.candidates import Candidate
from ragchat.reader.coverage import row_values
from ragchat.reader.question import KINDS, Question
from ragchat.reader.text import CELL_LABEL, SPEAKER
from ragchat.retrieve.terms import WEAK_STEMS, content_stems
from ragchat.types import Hit

FEATURES: tuple[str, ...] = (
    # the question
    "q_terms", "q_kind", "q_yes_no", "q_follow_up", "n_cands",
    # meaning
    "cos", "ctx_cos", "cos_gap", "ctx_gap", "cos_rank", "ctx_rank", "prev_cos", "next_cos",
    # words
    "lex", "lex_ctx", "lex_gap", "lex_rank", "idf_cov", "idf_cov_ctx", "spec_cov",
    "spec_cov_ctx", "codes", "codes_missing", "heading_cov", "prev_q_cov", "novelty",
    # the answer's kind
    "want_has", "band_holds", "has_number",
    # tables
    "is_row", "row_value_match", "row_column_match",
    # place
    "hit_rank", "hit_score", "hit_dense", "hit_sparse", "in_child", "on_aspect", "order",
    "n_words", "speaker", "same_doc_as_best",
)  # fmt: skip
INDEX = {name: i for i, name in enumerate(FEATURES)}
_NUMBER = re.compile(r"\d")
_CODE = re.compile(r"\b(?=[A-Za-z-]*\d)[A-Za-z0-9][A-Za-z0-9./:-]*\b")
_ROW_CELL = re.compile(rf"(?:^|;\s+)({CELL_LABEL}):\s")


@dataclass(frozen=True)
class Inputs:
    """What the features are computed from: the candidates, their texts without speaker
    labels, the hits they come from, and the cosines of the question with each candidate and
    with its labelled form ("heading: sentence")."""

    cands: Sequence[Candidate]
    plain: Sequence[str]
    hits: Sequence[Hit]
    cos: np.ndarray
    ctx_cos: np.ndarray


def _coverage(wanted: frozenset[str] | set[str], have: set[str], weight: dict[str, float]) -> float:
    total = sum(weight.get(s, 1.0) for s in wanted)
    if not total:
        return 0.0
    return sum(weight.get(s, 1.0) for s in wanted if s in have) / total


def _rank(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float32)
    ranks[order] = np.arange(len(values), dtype=np.float32)
    return ranks


def _doc(hit: Hit) -> str:
    return hit.chunk.doc_id or hit.chunk.source


def features(question: Question, x: Inputs) -> np.ndarray:
    n = len(x.cands)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if not n:
        return out
    stems = [content_stems(t) for t in x.plain]
    labels = [content_stems(c.label) for c in x.cands]
    headings = [content_stems(c.heading) for c in x.cands]
    q = question.stems
    # idf over this question's candidates: a word in few of them tells them apart
    df: Counter[str] = Counter()
    for s, lab in zip(stems, labels, strict=True):
        df.update(s | lab)
    idf = {w: math.log(1 + n / (1 + df[w])) for w in q}
    weak = {w: 0.3 for w in q if w in WEAK_STEMS}
    prev_q = content_stems(question.previous) if question.previous else set()
    codes = set(question.codes)
    lex = np.array([_coverage(q, s, weak) for s in stems], dtype=np.float32)
    lex_ctx = np.array(
        [_coverage(q, s | lab, weak) for s, lab in zip(stems, labels, strict=True)],
        dtype=np.float32,
    )
    cos = np.asarray(x.cos, dtype=np.float32)
    ctx = np.asarray(x.ctx_cos, dtype=np.float32)
    best = int(np.argmax(np.maximum(cos, ctx)))
    best_doc = _doc(x.hits[x.cands[best].hit_rank])
    by_hit: dict[int, list[int]] = {}
    for i, c in enumerate(x.cands):
        by_hit.setdefault(c.hit_rank, []).append(i)
    top_score = max((h.score for h in x.hits), default=1.0) or 1.0
    sparse = [float(h.scores.get("bm25", h.scores.get("sparse", 0.0))) for h in x.hits]
    top_sparse = max(sparse, default=0.0) or 1.0
    out[:, INDEX["q_terms"]] = len(q)
    out[:, INDEX["q_kind"]] = KINDS.index(question.kind)
    out[:, INDEX["q_yes_no"]] = question.yes_no
    out[:, INDEX["q_follow_up"]] = question.follow_up
    out[:, INDEX["n_cands"]] = n
    out[:, INDEX["cos"]] = cos
    out[:, INDEX["ctx_cos"]] = ctx
    out[:, INDEX["cos_gap"]] = cos.max() - cos
    out[:, INDEX["ctx_gap"]] = ctx.max() - ctx
    out[:, INDEX["cos_rank"]] = _rank(cos)
    out[:, INDEX["ctx_rank"]] = _rank(ctx)
    out[:, INDEX["lex"]] = lex
    out[:, INDEX["lex_ctx"]] = lex_ctx
    out[:, INDEX["lex_gap"]] = lex_ctx.max() - lex_ctx
    out[:, INDEX["lex_rank"]] = _rank(lex_ctx + 0.01 * cos)
    for i, c in enumerate(x.cands):
        hit = x.hits[c.hit_rank]
        s, lab, text = stems[i], labels[i], x.plain[i]
        siblings = by_hit[c.hit_rank]
        k = siblings.index(i)
        row = out[i]
        row[INDEX["prev_cos"]] = cos[siblings[k - 1]] if k > 0 else 0.0
        row[INDEX["next_cos"]] = cos[siblings[k + 1]] if k + 1 < len(siblings) else 0.0
        row[INDEX["idf_cov"]] = _coverage(q, s, idf)
        row[INDEX["idf_cov_ctx"]] = _coverage(q, s | lab, idf)
        row[INDEX["spec_cov"]] = _coverage(question.specific, s, {})
        row[INDEX["spec_cov_ctx"]] = _coverage(question.specific, s | lab, {})
        found = {m.lower() for m in _CODE.findall(f"{text} {c.label}")}
        row[INDEX["codes"]] = len(codes & found)
        row[INDEX["codes_missing"]] = len(codes - found)
        row[INDEX["heading_cov"]] = _coverage(q, headings[i] | lab, weak)
        row[INDEX["prev_q_cov"]] = _coverage(frozenset(prev_q), s | lab, {}) if prev_q else 0.0
        row[INDEX["novelty"]] = len(s - q - lab) / max(1, len(s))
        row[INDEX["want_has"]] = question.wanted.holds(text)
        values = row_values(text)
        row[INDEX["band_holds"]] = (
            bool(question.values)
            and values is not None
            and ranges.holds(text, list(question.values))
        )
        row[INDEX["has_number"]] = _NUMBER.search(text) is not None
        row[INDEX["is_row"]] = values is not None
        if values is not None:
            row[INDEX["row_value_match"]] = len(values & q) / max(1, len(q))
            columns = content_stems(" ".join(_ROW_CELL.findall(text)))
            row[INDEX["row_column_match"]] = len(columns & q) / max(1, len(q))
        row[INDEX["hit_rank"]] = c.hit_rank
        row[INDEX["hit_score"]] = hit.score / top_score
        row[INDEX["hit_dense"]] = float(hit.scores.get("dense", 0.0))
        row[INDEX["hit_sparse"]] = sparse[c.hit_rank] / top_sparse
        row[INDEX["in_child"]] = c.in_child
        row[INDEX["on_aspect"]] = c.on_aspect
        row[INDEX["order"]] = c.order
        row[INDEX["n_words"]] = len(text.split())
        row[INDEX["speaker"]] = SPEAKER.match(c.text) is not None
        row[INDEX["same_doc_as_best"]] = _doc(hit) == best_doc
    return out
