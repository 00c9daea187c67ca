"""What a reader sees, on their own documents: questions and conversations asked through the
chat engine over a knowledge base built from a folder, each reply judged by its key facts, the
place it cites, and whether it refused.

Question file (JSONL, one record a line)::

    {"id": "hb01", "question": "What's the most we can spend on a hotel in London per night?",
     "answerable": true, "facts": [["180"]], "where": "table",
     "place": {"file": "staff-handbook.md", "heading": ["Handbook", "Travel", "Hotels"]}}
    {"id": "u01", "question": "Is it safe to take paracetamol when pregnant?",
     "answerable": false, "near": "amoxicillin-leaflet.md"}

``facts`` lists key facts, each a list of accepted variants (one variant suffices); ``place``
names the file and one of ``heading`` (a heading path), ``page``, ``slide``, ``row`` (a
spreadsheet's row number, with ``sheet`` for a workbook) or ``start``/``end`` (``HH:MM:SS.mmm``
of the cues that hold the answer); a file alone (plain text) is matched by file. Any other
string field of a record (``kind``, ``format``, ``style``, ``group``…) is kept as a tag the
summary is split by. Conversation file:
``{"id", "turns": [{"message", "facts"?, "where"?, "place"?}]}``; a turn with ``facts`` is
judged like a question.

Per reply:

- key facts: every fact has a variant in the reply (normalised: case, dashes, quotes, markup
  and currency signs folded; a variant must not sit inside a longer word or number);
- right place: a citation's file is the gold file and its heading path is the gold's or a
  path inside it (or its parent section, when that is all the citation names), its page is
  the gold page, or its time range overlaps the gold's; a refusal is a miss;
- refused: the engine's NO_ANSWER flag.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.eval.data import EvalDataError
from ragchat.eval.metrics import latency_stats
from ragchat.types import Citation, HistoryMessage

if TYPE_CHECKING:  # the engine pulls in LangGraph
    from ragchat.agents.engine import ChatEngine

Progress = Callable[[str, int, int], None]
_MARKER = re.compile(r"\s*\[\d{1,3}\]")
_FOLD = str.maketrans(
    {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‑": "-", "‐": "-", "−": "-"}
)
_DROP = re.compile(r"[*_#`£$€]")


@dataclass(frozen=True)
class Place:
    file: str
    heading: tuple[str, ...] = ()
    page: int | None = None
    start: float | None = None  # seconds
    end: float | None = None
    slide: int | None = None
    sheet: str | None = None
    row: int | None = None  # a spreadsheet's row number


@dataclass(frozen=True)
class Judged:
    """What a judged question or turn expects."""

    facts: tuple[tuple[str, ...], ...]
    where: str
    place: Place | None


@dataclass(frozen=True)
class DocQuestion:
    qid: str
    question: str
    gold: Judged | None  # None: the documents do not answer it
    near: str = ""
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DocConversation:
    cid: str
    turns: tuple[tuple[str, Judged | None], ...]
    tags: tuple[tuple[str, str], ...] = ()
    unanswerable: frozenset[int] = frozenset()  # 1-based turns the documents do not answer


# Record fields that are not tags to split the summary by.
_NOT_TAGS = frozenset(
    {
        "id",
        "question",
        "answerable",
        "facts",
        "where",
        "place",
        "near",
        "turns",
        "evidence",
        "why",
        "message",
        "file",
    }
)


def _tags(rec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k, str(v)) for k, v in sorted(rec.items()) if k not in _NOT_TAGS and isinstance(v, str)
    )


# -- loading --------------------------------------------------------------------------------
def seconds(stamp: str) -> float:
    """``HH:MM:SS.mmm`` (or ``MM:SS.mmm``) → seconds."""
    total = 0.0
    for part in stamp.strip().split(":"):
        total = total * 60 + float(part)
    return total


def _place(rec: Any, where: str) -> Place | None:
    if rec is None:
        return None
    if not isinstance(rec, dict) or not rec.get("file"):
        raise EvalDataError(f'{where}: "place" needs a "file"')
    try:
        return Place(
            file=str(rec["file"]),
            heading=tuple(str(h) for h in rec.get("heading") or ()),
            page=int(rec["page"]) if rec.get("page") is not None else None,
            start=seconds(str(rec["start"])) if rec.get("start") else None,
            end=seconds(str(rec["end"])) if rec.get("end") else None,
            slide=int(rec["slide"]) if rec.get("slide") is not None else None,
            sheet=str(rec["sheet"]) if rec.get("sheet") else None,
            row=int(rec["row"]) if rec.get("row") is not None else None,
        )
    except (TypeError, ValueError) as exc:
        raise EvalDataError(f"{where}: bad place: {exc}") from exc


def _judged(rec: dict[str, Any], where: str) -> Judged:
    facts = rec.get("facts")
    if not isinstance(facts, list) or not facts:
        raise EvalDataError(f'{where}: "facts" must be a non-empty list of variant lists')
    out: list[tuple[str, ...]] = []
    for fact in facts:
        variants = [fact] if isinstance(fact, str) else fact
        if not isinstance(variants, list) or not all(isinstance(v, str) and v for v in variants):
            raise EvalDataError(f"{where}: a fact is a string or a list of strings")
        out.append(tuple(variants))
    return Judged(tuple(out), str(rec.get("where") or "prose"), _place(rec.get("place"), where))


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalDataError(f"{path}: cannot read: {exc}") from exc
    out: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvalDataError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
        if not isinstance(rec, dict):
            raise EvalDataError(f"{path}:{number}: expected an object")
        out.append((f"{path}:{number}", rec))
    return out


def load_questions(path: Path) -> list[DocQuestion]:
    out: list[DocQuestion] = []
    for where, rec in _records(path):
        if not str(rec.get("question") or "").strip():
            raise EvalDataError(f'{where}: a record needs a "question"')
        answerable = rec.get("answerable", True)
        gold = _judged(rec, where) if answerable else None
        qid = str(rec.get("id") or where.rsplit(":", 1)[1])
        near = str(rec.get("near") or "")
        out.append(DocQuestion(qid, str(rec["question"]), gold, near, _tags(rec)))
    return out


def load_doc_conversations(path: Path) -> list[DocConversation]:
    out: list[DocConversation] = []
    for where, rec in _records(path):
        turns = rec.get("turns")
        if not isinstance(turns, list) or not turns:
            raise EvalDataError(f'{where}: expected a non-empty "turns" list')
        parsed: list[tuple[str, Judged | None]] = []
        refuse: set[int] = set()
        for i, turn in enumerate(turns, start=1):
            if not isinstance(turn, dict) or not str(turn.get("message") or "").strip():
                raise EvalDataError(f'{where} turn {i}: a turn needs a "message"')
            judged = _judged(turn, f"{where} turn {i}") if "facts" in turn else None
            parsed.append((str(turn["message"]), judged))
            if turn.get("answerable") is False:
                refuse.add(i)
        cid = str(rec.get("id") or where.rsplit(":", 1)[1])
        out.append(DocConversation(cid, tuple(parsed), _tags(rec), frozenset(refuse)))
    return out


# -- judging --------------------------------------------------------------------------------
def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", _MARKER.sub("", text)).casefold().translate(_FOLD)
    return " ".join(_DROP.sub("", text).split())


def has_variant(reply: str, variant: str) -> bool:
    """``variant`` in ``reply`` (both normalised), not inside a longer word or number."""
    v = normalise(variant)
    pattern = rf"(?<!\w)(?<!\d[.,]){re.escape(v)}(?!\w)(?![.,]\d)"
    return bool(re.search(pattern, normalise(reply)))


def facts_found(reply: str, facts: Sequence[Sequence[str]]) -> int:
    return sum(any(has_variant(reply, v) for v in fact) for fact in facts)


def _same_file(citation: Citation, file: str) -> bool:
    source = citation.source.replace("\\", "/").split("#", 1)[0]
    return source == file or source.endswith("/" + file)


def cites_place(citation: Citation, place: Place) -> bool:
    if not _same_file(citation, place.file):
        return False
    if place.page is not None:
        return citation.page == place.page
    if place.slide is not None:
        return citation.slide == place.slide
    if place.row is not None:
        if place.sheet is not None and citation.sheet != place.sheet:
            return False
        return citation.rows is not None and citation.rows[0] <= place.row <= citation.rows[1]
    if place.start is not None and place.end is not None:
        if not citation.start_ts or not citation.end_ts:
            return False
        return seconds(citation.start_ts) <= place.end and seconds(citation.end_ts) >= place.start
    if place.heading:
        got, want = tuple(citation.section_path), place.heading
        if got[: len(want)] == want:  # the section or one inside it
            return True
        return len(got) >= 2 and want[: len(got)] == got  # its parent section
    return True


@dataclass
class Reply:
    """One judged (or unjudged) turn and what the engine answered."""

    qid: str
    question: str
    kind: str  # "answerable", "unanswerable", "first turn", "follow-up", "turn"
    where: str
    reply: str
    refused: bool
    facts: int  # key facts expected
    found: int  # key facts in the reply
    right_place: bool | None
    latency_ms: float
    locations: list[str] = field(default_factory=list)
    search_query: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    safety: str = ""  # the safety category of a blocked message, "" when it was answered

    @property
    def all_facts(self) -> bool:
        return self.facts > 0 and self.found == self.facts


def judge(
    qid: str,
    question: str,
    kind: str,
    gold: Judged | None,
    result: TurnResult,
    latency_ms: float,
    tags: Sequence[tuple[str, str]] = (),
) -> Reply:
    refused = bool(result.no_answer)
    found = 0 if gold is None or refused else facts_found(result.reply, gold.facts)
    right = None
    if gold is not None and gold.place is not None:
        place = gold.place
        right = not refused and any(cites_place(c, place) for c in result.citations)
    md = result.metadata
    return Reply(
        qid=qid,
        question=question,
        kind=kind,
        where=gold.where if gold is not None else "",
        reply=result.reply,
        refused=refused,
        facts=len(gold.facts) if gold is not None else 0,
        found=found,
        right_place=right,
        latency_ms=round(latency_ms, 3),
        locations=[f"{Path(c.source).name}: {c.location}" for c in result.citations],
        search_query=md.search_query or (md.retrieval.query if md.retrieval else "") or "",
        tags=dict(tags),
        safety=(md.safety.category or "blocked") if md.safety.blocked else "",
    )


# -- the run --------------------------------------------------------------------------------
async def ask_all(
    engine: ChatEngine,
    questions: Sequence[DocQuestion],
    conversations: Sequence[DocConversation],
    *,
    agent: str,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Reply]:
    """Each question as a fresh conversation, each conversation turn by turn with the replies
    as history; one unmeasured question first, so model loading stays out of the latencies."""
    options = TurnOptions(agent=agent)
    total = len(questions) + sum(len(c.turns) for c in conversations)
    done = 0
    out: list[Reply] = []

    async def ask(
        cid: str, message: str, history: list[HistoryMessage]
    ) -> tuple[TurnResult, float]:
        start = clock()
        result = await engine.run_turn(
            TurnRequest(
                message,
                user_id="eval",
                conversation=ConversationState(cid, history=list(history)),
                options=options,
            )
        )
        return result, (clock() - start) * 1000.0

    if questions:
        await ask("eval-warmup", questions[0].question, [])
    for q in questions:
        result, ms = await ask(f"eval-{q.qid}", q.question, [])
        kind = "answerable" if q.gold is not None else "unanswerable"
        out.append(judge(q.qid, q.question, kind, q.gold, result, ms, q.tags))
        done += 1
        if progress is not None:
            progress("questions", done, total)
    for conv in conversations:
        history: list[HistoryMessage] = []
        for number, (message, gold) in enumerate(conv.turns, start=1):
            result, ms = await ask(f"eval-{conv.cid}", message, history)
            kind = "first turn" if number == 1 else "follow-up"
            if number in conv.unanswerable:
                kind = "unanswerable turn"
            tags = conv.tags
            out.append(judge(f"{conv.cid}#{number}", message, kind, gold, result, ms, tags))
            history += [
                HistoryMessage(role="user", content=message),
                HistoryMessage(role="assistant", content=result.reply),
            ]
            done += 1
            if progress is not None:
                progress("questions", done, total)
    return out


def _rate(hits: Sequence[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def _answer_rates(rows: Sequence[Reply]) -> dict[str, Any]:
    judged = [r for r in rows if r.facts]
    placed = [r for r in judged if r.right_place is not None]
    return {
        "n": len(judged),
        "key_facts": _rate([r.all_facts for r in judged]),
        "fact_recall": (
            sum(r.found for r in judged) / sum(r.facts for r in judged) if judged else None
        ),
        "right_place": _rate([bool(r.right_place) for r in placed]),
        "wrong_refusal": _rate([r.refused for r in judged]),
    }


def summarise_replies(replies: Sequence[Reply]) -> dict[str, Any]:
    """The headline rates, then the answerable questions split by where the answer sits and
    the conversation turns split by first turn and follow-up."""
    answerable = [r for r in replies if r.kind == "answerable"]
    unanswerable = [r for r in replies if r.kind == "unanswerable"]
    refuse_turns = [r for r in replies if r.kind == "unanswerable turn"]
    follow = [r for r in replies if r.kind == "follow-up" and r.facts]
    out: dict[str, Any] = {
        "answerable": _answer_rates(answerable),
        "unanswerable": {
            "n": len(unanswerable),
            "refused": _rate([r.refused for r in unanswerable]),
        },
        "follow_up_key_facts": _rate([r.all_facts for r in follow]),
        "latency_ms": latency_stats([r.latency_ms for r in replies]),
        "by_where": {
            w: _answer_rates([r for r in answerable if r.where == w])
            for w in sorted({r.where for r in answerable})
        },
        "conversations": {
            k: _answer_rates([r for r in replies if r.kind == k])
            for k in ("first turn", "follow-up")
        },
        "safety_replies": sum(bool(r.safety) for r in replies),
        "safety_replies_by_kind": {
            k: sum(bool(r.safety) for r in replies if r.kind == k)
            for k in sorted({r.kind for r in replies})
        },
    }
    if refuse_turns:
        out["unanswerable_turns"] = {
            "n": len(refuse_turns),
            "refused": _rate([r.refused for r in refuse_turns]),
        }
    for tag in sorted({t for r in replies for t in r.tags}):
        values = sorted({r.tags[tag] for r in replies if tag in r.tags})
        out.setdefault("by_tag", {})[tag] = {
            v: {
                **_answer_rates([r for r in answerable if r.tags.get(tag) == v]),
                "unanswerable_refused": _rate(
                    [r.refused for r in unanswerable if r.tags.get(tag) == v]
                ),
                "follow_up_key_facts": _rate([r.all_facts for r in follow if r.tags.get(tag) == v]),
            }
            for v in values
        }
    return out
