"""Mines the ordinary messages the offline safety classifier mistakes for something alarming
from the user-documents corpus, and measures every screen's false alarms.

``--mine`` (train split only): classifies every question, conversation turn and everyday
message labelled ordinary (``corpus/messages.labels.jsonl``), keeps those whose embedding
evidence comes near a category (a head probability of at least ``--near``, or overdose intent
evidence of at least ``--near``), refits with them as safe examples and repeats for
``--rounds`` rounds; writes ``src/ragchat/safety/data/ordinary.yaml``. Rules are not mined
(a rule fires whatever the head says; rule false alarms are fixed in the rule).

``--screens``: writes ``src/ragchat/safety/data/screens.yaml`` from the train split of
``corpus/screens.jsonl``: the messages that mean it join their category's head examples, the
everyday idioms the everyday look-alikes.

Without either: false alarms per screen (rule, head, overdose intent) on a split, then on the
same split of ``corpus/screens.jsonl`` the idioms' false alarms and the meant messages caught,
per category. Example::

    PYTHONPATH=src .venv/bin/python benchmarks/safety_ordinary.py --split val
    PYTHONPATH=src .venv/bin/python benchmarks/safety_ordinary.py --mine --rounds 2
    PYTHONPATH=src .venv/bin/python benchmarks/safety_ordinary.py --screens
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

import yaml

from ragchat import resources
from ragchat.safety import evidence
from ragchat.safety.offline import OfflineSafetyClassifier
from ragchat.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"


def ordinary(split: set[str]) -> list[tuple[str, str]]:
    """(kind, text) of every message of ``split`` a reader would call ordinary."""
    labels = {}
    for line in (CORPUS / "messages.labels.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        labels[rec["id"]] = rec["label"]
    out: list[tuple[str, str]] = []
    for line in (CORPUS / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["split"] in split:
            out.append(("question", r["question"]))
    for line in (CORPUS / "conversations.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["split"] in split:
            out += [("turn", t["message"]) for t in r["turns"]]
    for line in (CORPUS / "messages.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["split"] in split and labels.get(r["id"]) == "ordinary":
            out.append(("message", r["message"]))
    return out


def screens(split: set[str]) -> list[dict[str, str]]:
    """The records of ``corpus/screens.jsonl`` in ``split``."""
    lines = (CORPUS / "screens.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r["split"] in split]


def caught(clf: OfflineSafetyClassifier, records: list[dict[str, str]], show: int) -> None:
    """Meant messages blocked, per category (any category counts: each gets a safety reply)."""
    hits: collections.Counter[str] = collections.Counter()
    totals: collections.Counter[str] = collections.Counter()
    missed: list[str] = []
    for r in records:
        totals[r["label"]] += 1
        if clf.classify_sync(r["message"]).safe:
            missed.append(r["message"])
        else:
            hits[r["label"]] += 1
    print("meant messages caught:", {k: f"{hits[k]}/{totals[k]}" for k in sorted(totals)})
    for text in missed[:show]:
        print(f"          missed: {text[:100]}")


def screen(reason: str) -> str:
    """Which screen a verdict's reason names: a rule, a head, or overdose intent."""
    text = reason.removeprefix("offline: ")
    if text.startswith("rule "):
        return text.split(" ", 2)[1]
    if text.startswith("linear "):
        return "head " + text.split(" ")[1].rstrip(":")
    if text.startswith("overdose"):
        return "overdose intent"
    return text.split(":")[0]


def false_alarms(clf: OfflineSafetyClassifier, items: list[tuple[str, str]], show: int) -> None:
    by_screen: collections.Counter[str] = collections.Counter()
    by_kind: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for kind, text in items:
        verdict = clf.classify_sync(text)
        if not verdict.safe:
            name = screen(verdict.reason or "")
            by_screen[name] += 1
            by_kind[kind] += 1
            examples[name].append(text)
    kinds = collections.Counter(k for k, _ in items)
    print("false alarms:", {k: f"{by_kind[k]}/{kinds[k]}" for k in sorted(kinds)})
    for name, n in by_screen.most_common():
        print(f"  {n:4d}  {name}")
        for text in examples[name][:show]:
            print(f"          {text[:100]}")


def near(
    clf: OfflineSafetyClassifier, texts: list[str], floor: float
) -> tuple[list[str], list[str]]:
    """(texts whose head probability for a category reaches ``floor``, texts naming a
    medicine), leaving out those a rule fires on."""
    heads, doses = [], []
    for text, scores in zip(texts, clf.score_many(texts), strict=True):
        if scores.rules:
            continue
        top = max((max(p) for p in scores.probs.values() if p), default=0.0)
        if top >= floor:
            heads.append(text)
        if scores.overdose is not None and scores.overdose.medication is not None:
            doses.append(text)  # every ordinary medicine question: the overdose veto's set
    return heads, doses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="val")
    parser.add_argument("--mine", action="store_true")
    parser.add_argument("--screens", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--near", type=float, default=0.2)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args()
    settings = Settings()
    embedder = resources.embedder(settings)
    if args.screens:
        write_screens(screens({"train"}))
        return
    if not args.mine:
        clf = OfflineSafetyClassifier(embedder)
        split = set(args.split.split(","))
        items = ordinary(split)
        print(f"{args.split}: {len(items)} ordinary questions, turns and messages")
        false_alarms(clf, items, args.show)
        records = screens(split)
        idioms = [("idiom", r["message"]) for r in records if r["label"] == "ordinary"]
        print(f"{args.split}: {len(idioms)} everyday idioms (corpus/screens.jsonl)")
        false_alarms(clf, idioms, args.show)
        caught(clf, [r for r in records if r["label"] != "ordinary"], args.show)
        return
    texts = sorted({t for _, t in ordinary({"train"})})
    mined: dict[str, list[str]] = {"safe": [], "doses": []}
    for round_ in range(1, args.rounds + 1):
        write(mined)
        clf = OfflineSafetyClassifier(embedder)
        heads, doses = near(clf, texts, args.near)
        more = {
            "safe": [t for t in heads if t not in mined["safe"]],
            "doses": [t for t in doses if t not in mined["doses"]],
        }
        print(
            f"round {round_}: {len(more['safe'])} near a category, "
            f"{len(more['doses'])} naming a medicine"
        )
        if not any(more.values()):
            break
        for key in mined:
            mined[key] += more[key]
    write(mined)
    print(f"wrote {len(mined['safe'])} + {len(mined['doses'])} to {evidence.ORDINARY_PATH}")


def write(mined: dict[str, list[str]]) -> None:
    header = (
        "# Ordinary messages about people's own documents that the offline safety heads took\n"
        "# for something alarming, mined from corpus/ (train split only) by\n"
        "# benchmarks/safety_ordinary.py --mine: `safe` joins the category head's safe\n"
        "# examples, `doses` the overdose-intent head's (safety/evidence.py).\n"
    )
    body = yaml.safe_dump({k: sorted(v) for k, v in mined.items()}, allow_unicode=True, width=100)
    evidence.ORDINARY_PATH.write_text(header + body, encoding="utf-8")


def write_screens(records: list[dict[str, str]]) -> None:
    meant: dict[str, list[str]] = collections.defaultdict(list)
    for r in records:
        if r["label"] != "ordinary":
            meant[r["label"]].append(r["message"])
    data = {
        "categories": {k: sorted(v) for k, v in sorted(meant.items())},
        "everyday": sorted(r["message"] for r in records if r["label"] == "ordinary"),
    }
    header = (
        "# The train split of corpus/screens.jsonl, written by\n"
        "# benchmarks/safety_ordinary.py --screens: `categories` join the category head's\n"
        "# examples, `everyday` the everyday look-alikes (safety/evidence.py).\n"
    )
    body = yaml.safe_dump(data, allow_unicode=True, width=100)
    evidence.SCREENS_PATH.write_text(header + body, encoding="utf-8")
    n_meant = sum(map(len, meant.values()))
    print(f"wrote {n_meant} + {len(data['everyday'])} to {evidence.SCREENS_PATH}")


if __name__ == "__main__":
    main()
