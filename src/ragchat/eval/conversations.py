"""Multi-turn evaluation: conversations played through the chat engine, turn by turn, with the
replies fed back as history, as a user would have them.

Input: JSONL, one conversation a line::

    {"id": "c1", "topic": "ibuprofen", "kb": null,
     "turns": [{"message": "Tell me about ibuprofen."},
               {"message": "How much should an adult take?", "gold_doc": "12-3"},
               {"message": "Is it safe in pregnancy?",
                "gold_section": {"file": "drugs/ibuprofen.md", "section": "Pregnancy"},
                "answer": "reference answer (optional)"}]}

Per judged turn (a ``gold_doc`` corpus id or a ``gold_section``), retrieval metrics of three
queries, each searched with the agent's own retriever to ``DEPTH`` hits:

- ``agent``: the search query the agent wrote itself (``TurnMetadata.search_query``, after its
  reformulation) — what the turn really searched for;
- ``raw``: the message as typed (the lower bound: no conversation at all);
- ``topic``: the message with the conversation's ``topic`` written in (the upper bound a
  reformulation can hope for), when the file gives one.

Answer metrics per turn are those of ``eval answers`` (``score_turn``); ROUGE-L and similarity
only for turns with a reference ``answer``. Everything is split by first turn vs follow-ups.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions
from ragchat.embed.base import Embedder
from ragchat.eval.answers import AnswerItem, AnswerRecord, ChunkLookup, score_turn, summarise
from ragchat.eval.data import (
    CorpusUnits,
    EvalDataError,
    SectionGold,
    SectionUnits,
    UnitMapper,
    parse_section,
    ranked_units,
)
from ragchat.eval.metrics import mean_metrics, query_metrics
from ragchat.retrieve.base import Retriever
from ragchat.types import HistoryMessage

if TYPE_CHECKING:  # the engine pulls in LangGraph
    from ragchat.agents.engine import ChatEngine

DEPTH = 100
QUERY_KINDS = ("agent", "raw", "topic")
GROUPS = ("first", "follow-up", "all")
Progress = Callable[[str, int, int], None]
_PRONOUN = re.compile(r"\b(its|it|they|them|their|this|that)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ConversationTurn:
    message: str
    gold_doc: str | None = None
    gold_section: SectionGold | None = None
    answer: str | None = None  # a reference answer, for ROUGE-L and similarity

    @property
    def judged(self) -> bool:
        return self.gold_doc is not None or self.gold_section is not None


@dataclass(frozen=True)
class Conversation:
    cid: str
    turns: tuple[ConversationTurn, ...]
    topic: str | None = None
    kb: str | None = None  # another knowledge base than the agent's


def _turn(rec: Any, where: str) -> ConversationTurn:
    if not isinstance(rec, dict) or not str(rec.get("message") or "").strip():
        raise EvalDataError(f'{where}: a turn needs a non-empty "message"')
    section = rec.get("gold_section")
    gold_section = None
    if section is not None:
        if not isinstance(section, dict) or not {"file", "section"} <= set(section):
            raise EvalDataError(f'{where}: "gold_section" must be {{"file", "section"}}')
        try:
            gold_section = parse_section(str(section["file"]), str(section["section"]))
        except ValueError as exc:
            raise EvalDataError(f"{where}: {exc}") from exc
    doc = rec.get("gold_doc")
    answer = rec.get("answer")
    return ConversationTurn(
        message=str(rec["message"]),
        gold_doc=str(doc) if doc not in (None, "") else None,
        gold_section=gold_section,
        answer=str(answer) if answer else None,
    )


def load_conversations(path: Path) -> list[Conversation]:
    """The conversations of a JSONL file, in file order (see the module docstring)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalDataError(f"{path}: cannot read: {exc}") from exc
    out: list[Conversation] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalDataError(f"{where}: invalid JSON: {exc.msg}") from exc
        if not isinstance(rec, dict) or not isinstance(rec.get("turns"), list) or not rec["turns"]:
            raise EvalDataError(f'{where}: expected an object with a non-empty "turns" list')
        turns = tuple(_turn(t, f"{where} turn {i}") for i, t in enumerate(rec["turns"], 1))
        topic = str(rec["topic"]).strip() if rec.get("topic") else None
        kb = str(rec["kb"]) if rec.get("kb") else None
        out.append(Conversation(str(rec.get("id") or number), turns, topic or None, kb))
    return out


def with_topic(message: str, topic: str) -> str:
    """The message with the topic written in: the first pronoun replaced by it ("How is it
    treated?" → "How is X treated?"), else the topic appended; unchanged when it names it."""
    if topic.casefold() in message.casefold():
        return message
    found = _PRONOUN.search(message)
    if found is None:
        return f"{message.rstrip()} ({topic})"
    return message[: found.start()] + topic + message[found.end() :]


# -- the run --------------------------------------------------------------------------------
@dataclass
class TurnRecord:
    cid: str
    turn: int  # 1-based
    message: str
    agent_query: str
    topic_query: str | None
    searched: bool  # the agent retrieved (not small talk, clarification, a template …)
    gold: str | None
    metrics: dict[str, dict[str, float]]  # query kind → metric → value (judged turns only)
    answer: AnswerRecord

    @property
    def group(self) -> str:
        return "first" if self.turn == 1 else "follow-up"


@dataclass
class ConversationRun:
    kb: str
    agent: str
    backend: str
    conversations: int
    summary: dict[str, Any]
    records: list[TurnRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "records"}


def _mapper(turn: ConversationTurn) -> tuple[UnitMapper, dict[str, int]]:
    if turn.gold_section is not None:
        return SectionUnits([turn.gold_section]), {turn.gold_section.unit_id: 1}
    assert turn.gold_doc is not None
    return CorpusUnits(), {turn.gold_doc: 1}


def turn_metrics(
    retriever: Retriever, turn: ConversationTurn, queries: dict[str, str]
) -> dict[str, dict[str, float]]:
    """Ranking metrics of each query against the turn's gold, searched with ``retriever``."""
    mapper, rels = _mapper(turn)
    out: dict[str, dict[str, float]] = {}
    for kind, query in queries.items():
        hits = retriever.retrieve(query, top_k=DEPTH, filters=None).hits if query else []
        out[kind] = query_metrics(ranked_units(hits, mapper, DEPTH), rels)
    return out


async def evaluate_conversations(
    engine: ChatEngine,
    conversations: Sequence[Conversation],
    *,
    agent: str,
    retriever: Callable[[str | None], Retriever],
    chunks: ChunkLookup,
    embedder: Embedder,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[TurnRecord]:
    """Each conversation from a fresh state with ``agent`` forced; every reply goes back into
    the history of the next turn. ``retriever(kb)`` is the agent's retriever (over ``kb`` when
    a conversation names another knowledge base)."""
    records: list[TurnRecord] = []
    total = sum(len(c.turns) for c in conversations)
    done = 0
    for conv in conversations:
        history: list[HistoryMessage] = []
        for number, turn in enumerate(conv.turns, start=1):
            start = clock()
            result = await engine.run_turn(
                TurnRequest(
                    turn.message,
                    user_id="eval",
                    conversation=ConversationState(f"eval-{conv.cid}", history=list(history)),
                    options=TurnOptions(agent=agent, kb=conv.kb),
                )
            )
            latency = (clock() - start) * 1000.0
            md = result.metadata
            agent_query = md.search_query or (md.retrieval.query if md.retrieval else "") or ""
            # what the retriever was given (a follow-up: with the earlier messages beside it)
            searched_text = str(getattr(md.trace, "searched", "") or "") or agent_query
            topic_query = with_topic(turn.message, conv.topic) if conv.topic else None
            metrics: dict[str, dict[str, float]] = {}
            if turn.judged:
                queries = {"agent": searched_text, "raw": turn.message}
                if topic_query is not None:
                    queries["topic"] = topic_query
                metrics = turn_metrics(retriever(conv.kb), turn, queries)
            item = AnswerItem(f"{conv.cid}#{number}", turn.message, turn.answer or "", conv.kb)
            scored = score_turn(item, result, latency, chunks, embedder)
            if turn.answer is None:  # nothing to compare the reply with
                scored = dataclasses.replace(scored, rouge_l=None, similarity=None)
            section = turn.gold_section.unit_id if turn.gold_section else None
            records.append(
                TurnRecord(
                    cid=conv.cid,
                    turn=number,
                    message=turn.message,
                    agent_query=agent_query,
                    topic_query=topic_query,
                    searched=md.gate is not None,
                    gold=turn.gold_doc or section,
                    metrics=metrics,
                    answer=scored,
                )
            )
            history += [
                HistoryMessage(role="user", content=turn.message),
                HistoryMessage(role="assistant", content=result.reply),
            ]
            done += 1
            if progress is not None:
                progress("turns", done, total)
    return records


def _group(records: Sequence[TurnRecord], group: str) -> list[TurnRecord]:
    return [r for r in records if group == "all" or r.group == group]


def summarise_turns(records: Sequence[TurnRecord]) -> dict[str, Any]:
    """Per group (first turn, follow-ups, all): the mean retrieval metrics of each query kind
    over the judged turns, the agent/topic nDCG@10 ratio, and the answer summary of
    ``eval answers``."""
    out: dict[str, Any] = {}
    for group in GROUPS:
        rows = _group(records, group)
        judged = [r for r in rows if r.metrics]
        retrieval: dict[str, dict[str, float]] = {}
        for kind in QUERY_KINDS:
            per = [r.metrics[kind] for r in judged if kind in r.metrics]
            if per:
                retrieval[kind] = mean_metrics(per) | {"turns": float(len(per))}
        entry: dict[str, Any] = {
            "turns": len(rows),
            "judged": len(judged),
            "searched_rate": sum(r.searched for r in rows) / len(rows) if rows else 0.0,
            "retrieval": retrieval,
            "answers": summarise([r.answer for r in rows]) if rows else None,
        }
        if "topic" in retrieval and "agent" in retrieval and retrieval["topic"]["nDCG@10"] > 0:
            entry["agent_vs_topic_ndcg"] = (
                retrieval["agent"]["nDCG@10"] / retrieval["topic"]["nDCG@10"]
            )
        out[group] = entry
    return out
