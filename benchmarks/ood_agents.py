"""Out-of-domain questions end to end: does each knowledge-base agent say plainly that its
documents do not cover them?

The retrieval gate alone (``ragchat eval calibrate``) refuses only part of the shipped
out-of-domain list at the default threshold; the agents add their own thresholds and the
offline composer's topic check. This sends every question of
``src/ragchat/eval/data/out_of_domain.jsonl`` to each agent (offline, sample knowledge bases)
and prints how many got an answer instead of NO_ANSWER, with those replies.

Usage: ``.venv/bin/python benchmarks/ood_agents.py [--agents medical,parenting,tutor]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from _common import sample_engine

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions

OOD = Path(__file__).resolve().parents[1] / "src/ragchat/eval/data/out_of_domain.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="medical,parenting,tutor")
    args = parser.parse_args()
    questions = [json.loads(line)["text"] for line in OOD.read_text().splitlines() if line]
    engine = sample_engine(prefix="ragchat-ood-")

    async def run() -> None:
        print("| agent | answered (should be NO_ANSWER) | refused |")
        print("|---|---:|---:|")
        details = []
        for agent in args.agents.split(","):
            answered = []
            for i, question in enumerate(questions):
                result = await engine.run_turn(
                    TurnRequest(
                        question,
                        user_id="bench",
                        conversation=ConversationState(f"ood-{i}"),
                        options=TurnOptions(agent=agent),
                    )
                )
                if not result.no_answer:
                    answered.append((question, " ".join(result.reply.split())[:90]))
            n = len(questions)
            print(f"| {agent} | {len(answered)} / {n} | {n - len(answered)} / {n} |")
            details += [f"- {agent}: {q!r} → {reply!r}…" for q, reply in answered]
        print("\n" + "\n".join(details))

    asyncio.run(run())


if __name__ == "__main__":
    main()
