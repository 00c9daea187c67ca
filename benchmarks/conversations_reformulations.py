"""How often the offline follow-up reformulation names the conversation's topic, on every
follow-up of a conversations file, for the heuristics of an older revision and of today's code
(no engine, no retrieval: seconds instead of the minutes of ``ragchat eval conversations``).

A follow-up counts when its standalone query contains the conversation's ``topic`` verbatim
(case-insensitive). The history holds the earlier user messages and a stand-in reply.

Usage: ``.venv/bin/python benchmarks/conversations_reformulations.py [--rev 77858a8]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any

from _common import DATA
from conversations_baseline import load_old

from ragchat.types import HistoryMessage


def share(module: Any, conversations: list[dict[str, Any]]) -> tuple[int, int]:
    named = total = 0
    for conv in conversations:
        history: list[HistoryMessage] = []
        for i, turn in enumerate(conv["turns"]):
            message = turn["message"]
            if i > 0:
                follow = module.is_follow_up(message, history)
                query = module.reformulate(message, history) if follow else message
                total += 1
                named += conv["topic"].casefold() in query.casefold()
            history += [HistoryMessage("user", message), HistoryMessage("assistant", "[1]")]
    return named, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="77858a8")
    parser.add_argument("--data", type=Path, default=DATA / "medquad/conversations.dev.jsonl")
    args = parser.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    conversations = [json.loads(line) for line in lines if line.strip()]
    new = importlib.import_module("ragchat.agents.heuristics.reformulate")
    for name, module in ((f"before ({args.rev})", load_old(args.rev)), ("after", new)):
        named, total = share(module, conversations)
        print(f"{name}: {named}/{total} follow-ups name the topic ({named / total:.1%})")


if __name__ == "__main__":
    main()
