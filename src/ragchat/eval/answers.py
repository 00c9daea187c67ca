"""Answer evaluation: ask questions through the chat engine and score the replies.

Inputs are PubMedQA PQA-L (``{pmid: {QUESTION, CONTEXTS, LONG_ANSWER, ...}}``, whose contexts
become the knowledge base) or a generic JSONL (``{"question", "answer", "kb"?}`` a line).

Per answer, with the refusal message never scored as an answer:

- ROUGE-L F1 (``rouge-score``, Porter stemming) of the reply, ``[n]`` markers removed, against
  the reference answer;
- embedding similarity: cosine of the reply and the reference (the configured embedder);
- citation validity: every ``[n]`` marker refers to a citation, and every cited chunk exists
  in the knowledge base and was among the chunks retrieved for that turn
  (``result.metadata.gate.chunk_ids``);
- groundedness: the share of reply sentences whose best cosine to the cited passages (each
  passage and each of its sentences) is at least ``GROUNDED_COSINE``;
- evidence hit (PubMedQA): every cited chunk comes from the question's own abstract (its
  corpus id starts with ``<pmid>-``); no citation counts as a miss;
- gold cited (JSONL with ``gold_doc``): the reference document is among the reply's citations
  (a cited chunk's corpus id equals ``gold_doc``, or its source file ends with it); a refusal
  counts as a miss.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.embed.base import Embedder
from ragchat.eval.data import EvalDataError
from ragchat.eval.metrics import latency_stats
from ragchat.reader.text import split_sentences, words
from ragchat.types import Chunk, Citation

if TYPE_CHECKING:  # the engine pulls in LangGraph
    from ragchat.agents.engine import ChatEngine

GROUNDED_COSINE = 0.6
MIN_SENTENCE_WORDS = 3
_MARKER = re.compile(r"\s*\[(\d{1,3})\]")

Progress = Callable[[str, int, int], None]
ChunkLookup = Callable[[str | None, Sequence[str]], list[Chunk]]  # (kb, ids) → known chunks


@dataclass(frozen=True)
class AnswerItem:
    qid: str
    question: str
    reference: str
    kb: str | None = None  # another knowledge base than the agent's (generic JSONL)
    pmid: str | None = None  # PubMedQA: the abstract the question was written from
    gold_doc: str | None = None  # the document that answers it: corpus id or file name


def load_pubmedqa(path: Path) -> tuple[list[AnswerItem], list[dict[str, str]]]:
    """PQA-L JSON → questions (file order) and corpus records, one per context passage,
    ``_id`` = ``<pmid>-<i>``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalDataError(f"{path}: cannot read PubMedQA JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise EvalDataError(f"{path}: expected an object of pmid → record")
    items: list[AnswerItem] = []
    corpus: list[dict[str, str]] = []
    for pmid, rec in data.items():
        if not isinstance(rec, dict) or not {"QUESTION", "CONTEXTS", "LONG_ANSWER"} <= set(rec):
            raise EvalDataError(f"{path}: record {pmid!r} lacks QUESTION/CONTEXTS/LONG_ANSWER")
        items.append(
            AnswerItem(str(pmid), str(rec["QUESTION"]), str(rec["LONG_ANSWER"]), None, str(pmid))
        )
        for i, passage in enumerate(rec["CONTEXTS"]):
            corpus.append({"_id": f"{pmid}-{i}", "title": "", "text": str(passage)})
    return items, corpus


def load_answer_jsonl(path: Path) -> list[AnswerItem]:
    """``{"question", "answer", "kb"?, "_id"? or "id"?, "gold_doc"?}`` a line."""
    items: list[AnswerItem] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalDataError(f"{path}: cannot read: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalDataError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
        if not isinstance(rec, dict) or not rec.get("question") or "answer" not in rec:
            raise EvalDataError(f'{path}:{number}: expected an object with "question", "answer"')
        qid = str(rec.get("_id") or rec.get("id") or number)
        kb = str(rec["kb"]) if rec.get("kb") else None
        gold = str(rec["gold_doc"]) if rec.get("gold_doc") else None
        items.append(AnswerItem(qid, str(rec["question"]), str(rec["answer"]), kb, gold_doc=gold))
    return items


# -- metrics --------------------------------------------------------------------------------
def strip_markers(text: str) -> str:
    return " ".join(_MARKER.sub("", text).split())


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F1 with stemming, ``[n]`` markers removed from the prediction."""
    return float(_scorer().score(reference, strip_markers(prediction))["rougeL"].fmeasure)


def citation_problems(
    reply: str,
    citations: Sequence[Citation],
    retrieved_ids: Sequence[str],
    known_ids: set[str],
) -> list[str]:
    """Why the reply's citations are not valid (empty when they are)."""
    problems: list[str] = []
    numbers = {c.index for c in citations}
    for marker in sorted({int(m) for m in _MARKER.findall(reply)}):
        if marker not in numbers:
            problems.append(f"[{marker}] has no citation")
    retrieved = set(retrieved_ids)
    for c in citations:
        if c.chunk_id not in known_ids:
            problems.append(f"[{c.index}] {c.chunk_id} is not in the knowledge base")
        elif c.chunk_id not in retrieved:
            problems.append(f"[{c.index}] {c.chunk_id} was not retrieved")
    return problems


def reply_sentences(reply: str) -> list[str]:
    """Sentences of the reply (markers removed) with at least ``MIN_SENTENCE_WORDS`` words."""
    out = [strip_markers(s) for s in split_sentences(reply, speakers=False)]
    return [s for s in out if len(words(s)) >= MIN_SENTENCE_WORDS]


def groundedness(
    sentences: Sequence[str],
    passages: Sequence[str],
    embedder: Embedder,
    threshold: float = GROUNDED_COSINE,
) -> float | None:
    """Share of sentences whose best cosine to a passage or a passage sentence reaches
    ``threshold``; ``None`` when there is nothing to judge."""
    if not sentences or not passages:
        return None
    units = list(passages) + [s for p in passages for s in split_sentences(p, speakers=False)]
    vecs = embedder.embed_documents([*sentences, *units])
    sims = vecs[: len(sentences)] @ vecs[len(sentences) :].T
    return float(np.mean(sims.max(axis=1) >= threshold))


def evidence_hit(corpus_ids: Sequence[str], pmid: str) -> bool:
    return bool(corpus_ids) and all(c.startswith(f"{pmid}-") for c in corpus_ids)


def gold_cited(cited: Sequence[Chunk], gold_doc: str) -> bool:
    """Whether a cited chunk belongs to ``gold_doc``: its corpus id (JSONL records) or the
    end of its source path (a file name such as ``ibuprofen.md``)."""
    for chunk in cited:
        md = chunk.metadata
        if str(md.get("corpus_id", "")) == gold_doc:
            return True
        source = str(md.get("source", "")).split("#", 1)[0]
        if source == gold_doc or source.endswith(f"/{gold_doc}"):
            return True
    return False


# -- the run --------------------------------------------------------------------------------
@dataclass
class AnswerRecord:
    qid: str
    question: str
    reference: str
    reply: str
    agent: str
    no_answer: bool
    citations: int
    cited_ids: list[str]
    citations_valid: bool
    problems: list[str]
    rouge_l: float | None
    similarity: float | None
    groundedness: float | None
    evidence_hit: bool | None
    latency_ms: float
    gold_cited: bool | None = None


@dataclass
class AnswerRun:
    kb: str
    agent: str
    backend: str
    questions: int
    summary: dict[str, Any]
    records: list[AnswerRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "records"}


async def evaluate_answers(
    engine: ChatEngine,
    items: Sequence[AnswerItem],
    *,
    agent: str,
    chunks: ChunkLookup,
    embedder: Embedder,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[AnswerRecord]:
    """Each question as a fresh one-turn conversation with ``agent``; the first question is
    asked once more beforehand, unmeasured, so model loading stays out of the latencies."""
    records: list[AnswerRecord] = []
    if items:
        await engine.run_turn(
            TurnRequest(
                items[0].question,
                user_id="eval",
                conversation=ConversationState("eval-warmup"),
                options=TurnOptions(agent=agent, kb=items[0].kb),
            )
        )
    for done, item in enumerate(items, start=1):
        start = clock()
        result = await engine.run_turn(
            TurnRequest(
                item.question,
                user_id="eval",
                conversation=ConversationState(f"eval-{item.qid}"),
                options=TurnOptions(agent=agent, kb=item.kb),
            )
        )
        latency = (clock() - start) * 1000.0
        records.append(score_turn(item, result, latency, chunks, embedder))
        if progress is not None:
            progress("answers", done, len(items))
    return records


def score_turn(
    item: AnswerItem,
    result: TurnResult,
    latency_ms: float,
    chunks: ChunkLookup,
    embedder: Embedder,
) -> AnswerRecord:
    citations: list[Citation] = list(result.citations)
    ids = [c.chunk_id for c in citations]
    known = {c.chunk_id: c for c in chunks(item.kb, ids)}
    gate = result.metadata.gate
    retrieved = list(gate.chunk_ids) if gate is not None else []
    problems = citation_problems(result.reply, citations, retrieved, set(known))
    rouge = similarity = grounded = None
    if not result.no_answer:
        rouge = rouge_l(result.reply, item.reference)
        vecs = embedder.embed_documents([strip_markers(result.reply), item.reference])
        similarity = float(vecs[0] @ vecs[1])
        passages = [known[i].text for i in dict.fromkeys(ids) if i in known]
        grounded = groundedness(reply_sentences(result.reply), passages, embedder)
    hit = None
    if item.pmid is not None:
        corpus = [str(known[i].metadata.get("corpus_id", "")) for i in ids if i in known]
        hit = evidence_hit(corpus, item.pmid)
    gold = None
    if item.gold_doc is not None:
        gold = not result.no_answer and gold_cited(
            [known[i] for i in ids if i in known], item.gold_doc
        )
    return AnswerRecord(
        qid=item.qid,
        question=item.question,
        reference=item.reference,
        reply=result.reply,
        agent=result.agent,
        no_answer=bool(result.no_answer),
        citations=len(citations),
        cited_ids=ids,
        citations_valid=not problems,
        problems=problems,
        rouge_l=rouge,
        similarity=similarity,
        groundedness=grounded,
        evidence_hit=hit,
        latency_ms=round(latency_ms, 3),
        gold_cited=gold,
    )


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def summarise(records: Sequence[AnswerRecord]) -> dict[str, Any]:
    """Quality means are over answered questions (a NO_ANSWER reply is not scored as text);
    ``*_all`` variants count a NO_ANSWER as 0. Citation rates are over answered questions."""
    n = len(records)
    answered = [r for r in records if not r.no_answer]
    a = max(len(answered), 1)
    out: dict[str, Any] = {
        "questions": n,
        "answered": len(answered),
        "no_answer_rate": (n - len(answered)) / n if n else 0.0,
        "rougeL_f1": _mean([r.rouge_l for r in answered]),
        "rougeL_f1_all": _mean([r.rouge_l or 0.0 for r in records]),
        "similarity": _mean([r.similarity for r in answered]),
        "similarity_all": _mean([r.similarity or 0.0 for r in records]),
        "citations_valid_rate": sum(r.citations_valid for r in answered) / a,
        "cited_rate": sum(r.citations > 0 for r in answered) / a,
        "groundedness": _mean([r.groundedness for r in answered]),
        "latency_ms": latency_stats([r.latency_ms for r in records]),
    }
    hits = [r.evidence_hit for r in records if r.evidence_hit is not None]
    if hits:
        out["evidence_hit_rate"] = sum(hits) / len(hits)
    golds = [r.gold_cited for r in records if r.gold_cited is not None]
    if golds:
        out["gold_cited_rate"] = sum(golds) / len(golds)
    return out
