"""Training and measuring data for the reader, from the corpus: each question (and each judged
conversation turn) asked over its group's knowledge base exactly as the server searches it,
every candidate the reader would see with its features and its label (whether it is the
writer's evidence), and the question-level signals of the refusal decision."""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragchat.agents.request import TurnRequest
from ragchat.reader.labels import evidence_match
from ragchat.reader.question import analyse
from ragchat.reader.read import prepare
from ragchat.reader.signals import lead_signals
from ragchat.types import HistoryMessage, Hit

if TYPE_CHECKING:
    from ragchat.embed.base import Embedder
    from ragchat.eval.corpus import Corpus
    from ragchat.eval.documents import DocQuestion
    from ragchat.settings import Settings

Progress = Callable[[str], None]


@dataclass
class Example:
    qid: str
    tags: dict[str, str]
    answerable: bool
    judged: bool  # a question or a judged turn (False: a turn nobody wrote an answer for)
    query: str
    message: str
    previous: str
    texts: list[str] = field(default_factory=list)  # candidates as the reader quotes them
    labels: list[str] = field(default_factory=list)  # their headings or leading questions
    match: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    x: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    passage: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    lead: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    hit_docs: list[str] = field(default_factory=list)  # file of each candidate's passage
    # float16 vectors (the question, each candidate) for trying a query-side adapter
    qv: np.ndarray | None = None
    sv: np.ndarray | None = None

    @property
    def positives(self) -> np.ndarray:
        return self.match >= 0.7


def example(
    qid: str,
    tags: dict[str, str],
    answerable: bool,
    query: str,
    message: str,
    previous: str,
    hits: Sequence[Hit],
    evidence: str,
    embedder: Embedder,
    *,
    judged: bool = True,
    keep_vectors: bool = False,
) -> Example:
    question = analyse(query, message, previous)
    out = Example(qid, tags, answerable, judged, query, message, previous)
    qv = np.asarray(embedder.embed_query(query), dtype=np.float32)
    prepared = prepare(question, hits, embedder, query_vector=qv)
    out.passage = prepared.passage
    if not prepared.cands:
        return out
    out.texts = list(prepared.plain)
    out.labels = [c.label for c in prepared.cands]
    out.x = prepared.x
    out.match = np.array(
        [evidence_match(t, evidence) if evidence else 0.0 for t in prepared.plain],
        dtype=np.float32,
    )
    out.lead = np.stack(
        [
            lead_signals(question, t, c.label, embedder)
            for t, c in zip(prepared.plain, prepared.cands, strict=True)
        ]
    )
    out.hit_docs = [hits[c.hit_rank].chunk.source.rsplit("/", 1)[-1] for c in prepared.cands]
    if keep_vectors and prepared.vectors is not None:
        out.qv = qv.astype(np.float16)
        out.sv = prepared.vectors.astype(np.float16)
    return out


def _group_engine(
    settings: Settings, embedder: Embedder, corpus: Corpus, group: str
) -> tuple[Any, str, Any]:
    """A fresh knowledge base of the group's documents, the engine over it, its agent's name
    and that agent's retriever: what the server searches for a question to it."""
    from ragchat.agents.bootstrap import resolve_config
    from ragchat.agents.factory import build_engine
    from ragchat.eval.corpus import build_group_kb

    kb = build_group_kb(settings, embedder, corpus, group)
    config = resolve_config(kb, settings)
    name = next(iter(config.agents))
    engine = build_engine(settings, config, embedder=embedder)
    return engine, name, engine.wiring.knowledge.retriever(engine.agents[name], kb)


async def group_examples(
    settings: Settings,
    embedder: Embedder,
    corpus: Corpus,
    group: str,
    evidence: dict[str, str],
) -> list[Example]:
    from ragchat.agents.types import ConversationState, TurnOptions

    part = corpus.in_group(group)
    engine, name, retriever = _group_engine(settings, embedder, corpus, group)
    out: list[Example] = []
    for q in part.questions:
        hits = retriever.retrieve(q.question).hits
        out.append(
            example(
                q.qid,
                dict(q.tags),
                q.gold is not None,
                q.question,
                q.question,
                "",
                hits,
                evidence.get(q.qid, ""),
                embedder,
            )
        )
    for conv in part.conversations:
        history: list[HistoryMessage] = []
        previous = ""
        for n, (message, gold) in enumerate(conv.turns, 1):
            result = await engine.run_turn(
                TurnRequest(
                    message,
                    user_id="reader",
                    conversation=ConversationState(f"reader-{conv.cid}", history=list(history)),
                    options=TurnOptions(agent=name),
                )
            )
            trace = result.metadata.trace
            query = str(getattr(trace, "reformulated_query", "") or "")
            query = query or result.metadata.search_query or message
            searched = str(getattr(trace, "searched", "") or "") or query
            hits = retriever.retrieve(searched).hits
            qid = f"{conv.cid}#{n}"
            judged = gold is not None or n in conv.unanswerable
            tags = dict(conv.tags) | {"turn": "first" if n == 1 else "follow-up"}
            out.append(
                example(
                    qid,
                    tags,
                    gold is not None,
                    query,
                    message,
                    previous,
                    hits,
                    evidence.get(qid, ""),
                    embedder,
                    judged=judged,
                )
            )
            history += [
                HistoryMessage(role="user", content=message),
                HistoryMessage(role="assistant", content=result.reply),
            ]
            previous = message
    return out


OFF_TOPIC = 60  # questions from other groups asked of each group's knowledge base


def off_topic_questions(corpus: Corpus, group: str, n: int = OFF_TOPIC) -> list[DocQuestion]:
    """Questions of the same split written for documents of kinds this group does not hold:
    what people ask a knowledge base about something else ("the best things to see in Lisbon"
    of a medicine leaflet). The corpus's own unanswerable questions are all near misses on the
    document's topic; without these the refusal model never sees a question off the topic."""
    import random

    split = next(d.split for d in corpus.documents if d.group == group)
    kinds = {d.kind for d in corpus.documents if d.group == group}
    others = {d.group for d in corpus.documents if d.split == split and d.group != group}
    pool = [
        q
        for q in corpus.questions
        if dict(q.tags).get("group") in others and dict(q.tags).get("kind") not in kinds
    ]
    return random.Random(f"off-topic {group}").sample(pool, min(n, len(pool)))


async def off_topic_examples(
    settings: Settings, embedder: Embedder, corpus: Corpus, group: str
) -> list[Example]:
    _, _, retriever = _group_engine(settings, embedder, corpus, group)
    out: list[Example] = []
    for q in off_topic_questions(corpus, group):
        hits = retriever.retrieve(q.question).hits
        tags = dict(q.tags) | {"group": group, "style": "off-topic"}
        out.append(
            example(f"{q.qid}@{group}", tags, False, q.question, q.question, "", hits, "",
                    embedder)
        )  # fmt: skip
    return out


def evidence_of(corpus_root: Path) -> dict[str, str]:
    import json

    out: dict[str, str] = {}
    for line in (corpus_root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["id"]] = r.get("evidence", "")
    for line in (corpus_root / "conversations.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            for i, t in enumerate(r["turns"], 1):
                out[f"{r['id']}#{i}"] = t.get("evidence", "")
    return out


def build(
    settings: Settings,
    embedder: Embedder,
    corpus: Corpus,
    splits: Sequence[str],
    *,
    cache: Path | None = None,
    progress: Progress | None = None,
) -> list[Example]:
    """Examples of every group of ``splits``; each group's examples are cached in ``cache``
    (a pickle per group) so a training run after a change of the model only rebuilds what
    changed (delete the cache after changing features or candidates)."""
    evidence = evidence_of(corpus.root)
    out: list[Example] = []
    for split in splits:
        for group in corpus.groups(split):
            path = cache / f"{group}.pkl" if cache else None
            if path is not None and path.exists():
                with path.open("rb") as fh:
                    out += pickle.load(fh)
                out += _off_topic(settings, embedder, corpus, group, cache, progress)
                continue
            start = time.perf_counter()
            found = asyncio.run(group_examples(settings, embedder, corpus, group, evidence))
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("wb") as fh:
                    pickle.dump(found, fh)
            if progress is not None:
                progress(f"{group}: {len(found)} examples in {time.perf_counter() - start:.0f} s")
            out += found
            out += _off_topic(settings, embedder, corpus, group, cache, progress)
    return out


def _off_topic(
    settings: Settings,
    embedder: Embedder,
    corpus: Corpus,
    group: str,
    cache: Path | None,
    progress: Progress | None,
) -> list[Example]:
    path = cache / f"off-topic-{group}.pkl" if cache else None
    if path is not None and path.exists():
        with path.open("rb") as fh:
            found: list[Example] = pickle.load(fh)
        return found
    start = time.perf_counter()
    found = asyncio.run(off_topic_examples(settings, embedder, corpus, group))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as fh:
            pickle.dump(found, fh)
    if progress is not None:
        progress(f"{group} off topic: {len(found)} examples in {time.perf_counter() - start:.0f} s")
    return found
