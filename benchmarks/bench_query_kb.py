"""Which knowledge base should ``POST /query`` without ``kb`` answer from? Two ways, measured
on questions written for the bundled sample knowledge bases (none of them an agent's routing
example):

- ``route``: as ``/chat`` routes a first message (the embedding router over the agents'
  descriptions and examples), keeping the best-scoring agent that has a knowledge base;
- ``search``: search every knowledge base (each by the agent that would answer from it) and
  take the one whose best passage is most relevant (``QueryService.choose_kb``).

Prints accuracy, the misses and the time per question (offline embedder, no reranker).

    PYTHONPATH=src python benchmarks/bench_query_kb.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ragchat import resources
from ragchat.agents.bootstrap import ensure_knowledge_bases
from ragchat.agents.config import load_config
from ragchat.agents.factory import build_engine
from ragchat.api.services.query import pick_agent
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.settings import Settings

QUESTIONS = [
    ("What is a migraine aura?", "medical"),
    ("Can acetaminophen damage the liver?", "medical"),
    ("Is a runny nose a sign of a cold or the flu?", "medical"),
    ("How long should I take amoxicillin for?", "medical"),
    ("What lifestyle changes lower blood pressure?", "medical"),
    ("What does low blood sugar feel like?", "medical"),
    ("Are antihistamine eye drops safe?", "medical"),
    ("Can I take ibuprofen while pregnant?", "medical"),
    ("What is medication overuse headache?", "medical"),
    ("How is type 2 diabetes diagnosed?", "medical"),
    ("My daughter keeps calling me back after lights out, what can I do?", "parenting"),
    ("Should screens be off before bedtime for kids?", "parenting"),
    ("How do I stay calm when my son screams in the supermarket?", "parenting"),
    ("Is it okay to give in to a tantrum?", "parenting"),
    ("What time should a three-year-old go to bed?", "parenting"),
    ("How dark should a child's bedroom be?", "parenting"),
    ("How do holidays affect a toddler's sleep routine?", "parenting"),
    ("Why do toddlers have meltdowns?", "parenting"),
    ("When should I ask for help with my child's tantrums?", "parenting"),
    ("Should a bedtime routine include a bath?", "parenting"),
    ("What is the function of mitochondria?", "textbook"),
    ("How does diffusion move substances across the membrane?", "textbook"),
    ("What do the heart valves do?", "textbook"),
    ("What is the difference between the pulmonary and systemic circulation?", "textbook"),
    ("What happens during the cardiac cycle?", "textbook"),
    ("How are oxygen and carbon dioxide carried in the blood?", "textbook"),
    ("What is tidal volume?", "textbook"),
    ("What enzymes break down proteins in the stomach?", "textbook"),
    ("How do villi increase absorption?", "textbook"),
    ("What is osmosis?", "textbook"),
    ("Does Robin have a dog?", "companion"),
    ("What does Robin grow in the garden?", "companion"),
    # Harder: words of another knowledge base's topic, or none of the agents' words.
    ("Can I give my toddler ibuprofen for a fever?", "medical"),
    ("Does coffee set off headaches?", "medical"),
    ("Which foods make blood sugar spike?", "medical"),
    ("Is sneezing every spring something to see a doctor about?", "medical"),
    ("How do I know if my child is overtired?", "parenting"),
    ("My kid wakes up screaming and doesn't recognise me, is that normal?", "parenting"),
    ("Why does my mouth water when I smell food?", "textbook"),
    ("What sets the pace of the heartbeat?", "textbook"),
    ("How many breaths a minute does an adult take at rest?", "textbook"),
    ("What keeps body temperature stable?", "textbook"),
]
# A knowledge base no agent describes (as an upload makes): routing cannot reach it.
EXTRA_KB = {
    "quokka.md": "# Quokkas\n\nQuokkas are small wallabies of Rottnest Island. They eat grasses, "
    "leaves and stems, and can go a long time without drinking, getting water from plants.\n\n"
    "## Breeding\n\nA female quokka raises one joey a year in her pouch for about six months.",
    "wombat.md": "# Wombats\n\nWombats dig long burrows with their strong claws. Their cube-"
    "shaped droppings mark territory. A wombat's pouch opens backwards, so no soil gets in.",
}
EXTRA_QUESTIONS = [
    ("What do quokkas eat?", "wildlife"),
    ("Why are wombat droppings cube-shaped?", "wildlife"),
    ("How long does a joey stay in the pouch?", "wildlife"),
]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        config = load_config()
        embedder = resources.embedder(settings)
        writer = resources.ingest_embedder(settings, embedder)
        ensure_knowledge_bases(settings, config, writer)
        notes = Path(tmp) / "wildlife"
        notes.mkdir()
        for name, text in EXTRA_KB.items():
            (notes / name).write_text(text, encoding="utf-8")
        wildlife = resources.open_or_create_kb(settings, "wildlife", writer)
        ingest_paths(wildlife, [notes], Chunker(settings.chunking))
        wildlife.close()
        engine = build_engine(settings, config, embedder=embedder)
        kbs = [*config.knowledge_bases, "wildlife"]
        probes = [(pick_agent(engine.agents, kb, needs_modes=False).name, kb) for kb in kbs]
        kb_of = {
            a.name: a.knowledge_base or a.persona_knowledge_base
            for a in config.agents.values()
            if a.knowledge_base or a.persona_knowledge_base
        }
        engine._router.route("warm up")  # embeds the agent cards once
        asyncio.run(engine.coverage("warm up", probes, "bench"))
        results: dict[str, list[tuple[str, str, str, float]]] = {"route": [], "search": []}
        for question, gold in QUESTIONS + EXTRA_QUESTIONS:
            start = time.perf_counter()
            scores = engine._router.route(question).scores
            routed = max((a for a in scores if a in kb_of), key=lambda a: scores[a])
            results["route"].append((question, gold, str(kb_of[routed]), _ms(start)))
            start = time.perf_counter()
            relevance = asyncio.run(engine.coverage(question, probes, "bench"))
            best = kbs[max(range(len(kbs)), key=relevance.__getitem__)]
            results["search"].append((question, gold, best, _ms(start)))
        for name, rows in results.items():
            right = sum(gold == got for _, gold, got, _ in rows)
            times = [ms for *_, ms in rows]
            print(
                f"{name:>6}: {right}/{len(rows)} right ({right / len(rows):.0%}), "
                f"p50 {statistics.median(times):.1f} ms, max {max(times):.1f} ms"
            )
            for question, gold, got, _ in rows:
                if gold != got:
                    print(f"        miss: {question!r}: {got} (wanted {gold})")
    return 0


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


if __name__ == "__main__":
    sys.exit(main())
