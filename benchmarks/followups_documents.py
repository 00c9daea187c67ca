"""Follow-ups over a user's own documents: plays every conversation of a conversations file
(``benchmarks/devsets/userdocs/conversations.jsonl`` format: turns with ``facts``, ``place``)
through the offline engine, feeding each reply back as history, with the default safety stage,
and scores every judged turn:

- **place**: one of the first three passages the search kept sits at the turn's ``place``
  (same file, and the heading, page or cue time range when given);
- **facts in passages**: every key fact (any accepted variant) is in those passages' text;
- **facts in reply**: every key fact is in the reply;
- **refused / crisis**: the reply said the documents don't cover it / the turn got the
  crisis reply.

``--rev`` patches the follow-up heuristics of an older revision into today's code (as
``conversations_baseline.py`` does), so before and after share one retriever and composer.
The agents are the three kinds that reformulate offline (``rag``, ``conversational_rag``,
``corrective_rag``), re-pointed at one knowledge base built from ``--docs``.

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/followups_documents.py \\
        [--rev d0f5dc4] [--show] [--agents tutor parenting medical]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO

from ragchat.agents.request import TurnRequest

DEVSET = REPO / "benchmarks/devsets/userdocs"


def _patch(rev: str) -> None:
    from conversations_baseline import load_old

    from ragchat.agents.heuristics import compose, intent, router
    from ragchat.agents.shared import answering

    old = load_old(rev)
    for module in (answering, intent, router, compose):
        for name in ("is_follow_up", "reformulate", "topic", "GENERIC", "reference_word"):
            if hasattr(module, name):
                setattr(module, name, getattr(old, name))


def _seconds(ts: str) -> float:
    h, m, s = ts.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def at_place(chunk: Any, place: dict[str, Any]) -> bool:
    md = chunk.metadata
    source = str(md.get("source") or md.get("file_name") or chunk.doc_id)
    if not source.endswith(place["file"]) and place["file"] not in source:
        return False
    if "heading" in place:
        return place["heading"][-1] in md.get("heading_path", [])
    if "page" in place:
        return md.get("page") == place["page"]
    if "start" in place and "start_ts" in md:
        return _seconds(md["start_ts"]) <= _seconds(place["end"]) and _seconds(
            md.get("end_ts", md["start_ts"])
        ) >= _seconds(place["start"])
    return True


def holds(text: str, facts: list[list[str]]) -> bool:
    low = text.lower()
    return all(any(v.lower() in low for v in variants) for variants in facts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=DEVSET / "docs")
    parser.add_argument("--conversations", type=Path, default=DEVSET / "conversations.jsonl")
    parser.add_argument("--rev", default=None, help="follow-up heuristics of this revision")
    parser.add_argument("--agents", nargs="+", default=["tutor", "parenting", "medical"])
    parser.add_argument("--show", action="store_true", help="print every follow-up")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    if args.rev:
        _patch(args.rev)

    from ragchat import resources
    from ragchat.agents.config import KnowledgeBaseConfig, load_config
    from ragchat.agents.factory import build_engine
    from ragchat.agents.types import ConversationState, TurnOptions
    from ragchat.ingest.chunking import Chunker
    from ragchat.ingestion.ingest import ingest_paths
    from ragchat.settings import Settings
    from ragchat.types import HistoryMessage
    from ragchat.vectorstores.embedded.kb import KnowledgeBase

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="followups-"))
    settings = Settings(data_dir=data_dir, config_file=None)
    embedder = resources.embedder(settings)
    kb_root = data_dir / "kbs"
    if (kb_root / "userdocs").exists():
        kb = KnowledgeBase.open(kb_root, "userdocs", embedder)
    else:
        kb = KnowledgeBase.create(kb_root, "userdocs", embedder)
        report = ingest_paths(kb, [args.docs], Chunker(settings.chunking))
        assert not report.errors, report.errors
    base = load_config()
    agents = {
        name: base.agents[name].model_copy(
            update={"knowledge_base": "userdocs", "description": "The user's own documents"}
        )
        for name in args.agents
    }
    config = base.model_copy(
        update={"knowledge_bases": {"userdocs": KnowledgeBaseConfig()}, "agents": agents}
    )
    engine = build_engine(settings, config, embedder=embedder, kb_opener=lambda name: kb)
    conversations = [
        json.loads(line) for line in args.conversations.read_text().splitlines() if line.strip()
    ]
    rows: dict[str, dict[str, list[bool]]] = {}
    times: list[float] = []
    for agent in args.agents:
        for conv in conversations:
            state = ConversationState(conversation_id=f"{agent}-{conv['id']}")
            state.assigned_agent = agent
            for i, turn in enumerate(conv["turns"]):
                start = time.perf_counter()
                result = asyncio.run(
                    engine.run_turn(
                        TurnRequest(
                            turn["message"],
                            user_id="u",
                            conversation=state,
                            options=TurnOptions(agent=agent),
                        )
                    )
                )
                times.append(time.perf_counter() - start)
                state.history += [
                    HistoryMessage("user", turn["message"]),
                    HistoryMessage("assistant", result.reply, agent=result.agent),
                ]
                gate = result.metadata.gate
                kept = kb.get_chunks(list(gate.chunk_ids[:3])) if gate else []
                passages = " ".join(c.text for c in kept)
                kind = "first turns" if i == 0 else "follow-ups"
                row = rows.setdefault(f"{agent} {kind}", {})
                crisis = result.metadata.routing.router == "safety"
                scores = {
                    "place": any(at_place(c, turn["place"]) for c in kept),
                    "facts in passages": holds(passages, turn["facts"]),
                    "facts in reply": holds(result.reply, turn["facts"]),
                    "refused": result.no_answer,
                    "crisis reply": crisis,
                }
                for key, value in scores.items():
                    row.setdefault(key, []).append(value)
                if args.show and i > 0:
                    marks = "".join("+" if scores[k] else "-" for k in list(scores)[:3])
                    print(
                        f"{agent:9} {conv['id']} {marks} {turn['message']!r} → "
                        f"{result.metadata.search_query!r}"
                    )
    label = f"before ({args.rev})" if args.rev else "after"
    print(f"\n{label}: {len(conversations)} conversations, docs {args.docs}")
    for name, row in rows.items():
        n = len(row["place"])
        cells = ", ".join(f"{k} {sum(v)}/{n}" for k, v in row.items())
        print(f"  {name:22} {cells}")
    times.sort()
    p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
    print(f"  turn latency p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms ({len(times)} turns)")


if __name__ == "__main__":
    main()
