"""``ragchat eval example``: a small evaluation set written from the bundled sample knowledge
bases, so that every command of the README's "Measure" section runs from a fresh clone (the
project's own benchmarks use BEIR data sets a clone does not have).

A BEIR-format corpus (one record per Markdown section of the medical, parenting and textbook
samples, ids ``<file stem>#<heading slug>``), questions with their gold sections (``qrels``),
the same gold as a sections TSV over the sample files (``ragchat eval retrieval --sections``),
and two-to-three-turn conversations with follow-ups (``ragchat eval conversations``). The
questions were written for this set; none is an agent's routing example."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ragchat.errors import ConfigError
from ragchat.resources import SAMPLE_KB_DIR

KBS = ("medical", "parenting", "textbook")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_SLUG = re.compile(r"[^a-z0-9]+")

# (query id, question, gold section id)
QUESTIONS = [
    ("q01", "What is a migraine aura?", "migraine#aura"),
    (
        "q02",
        "Can painkillers taken too often make headaches worse?",
        "migraine#medication-overuse-headache",
    ),
    ("q03", "What can set off a migraine?", "migraine#common-triggers"),
    ("q04", "Why is too much paracetamol dangerous for the liver?", "acetaminophen#liver-warning"),
    (
        "q05",
        "Which cold remedies also contain acetaminophen?",
        "acetaminophen#watch-for-hidden-acetaminophen",
    ),
    ("q06", "I'm allergic to penicillin, can I take amoxicillin?", "amoxicillin#allergy"),
    ("q07", "How can I tell a cold from the flu?", "common-cold#cold-or-flu"),
    (
        "q08",
        "How should I measure my blood pressure at home?",
        "hypertension#checking-your-blood-pressure",
    ),
    ("q09", "Which habits help lower high blood pressure?", "hypertension#lifestyle-changes"),
    ("q10", "Does ibuprofen upset the stomach?", "ibuprofen#side-effects"),
    ("q11", "Is ibuprofen safe during pregnancy?", "ibuprofen#pregnancy"),
    ("q12", "How do steroid nasal sprays help hay fever?", "seasonal-allergies#nasal-sprays"),
    ("q13", "How can I avoid pollen on high-pollen days?", "seasonal-allergies#reducing-exposure"),
    ("q14", "What are the signs of low blood sugar?", "type-2-diabetes#low-blood-sugar"),
    ("q15", "Which blood test shows type 2 diabetes?", "type-2-diabetes#diagnosis"),
    (
        "q16",
        "My toddler keeps asking for one more drink after lights out",
        "bedtime-routines#curtain-calls",
    ),
    (
        "q17",
        "Should my child stop watching tablets before bed?",
        "bedtime-routines#screens-and-activity",
    ),
    (
        "q18",
        "How warm and dark should a toddler's room be at night?",
        "bedtime-routines#the-sleep-environment",
    ),
    ("q19", "Why do two-year-olds throw tantrums?", "toddler-tantrums#why-tantrums-happen"),
    (
        "q20",
        "Should I give my child the sweet to stop the screaming?",
        "toddler-tantrums#don-t-reward-the-tantrum",
    ),
    (
        "q21",
        "How do substances cross the plasma membrane?",
        "ch01-cells#moving-substances-across-the-membrane",
    ),
    ("q22", "What does the heart's electrical system do?", "ch02-heart#electrical-control"),
    (
        "q23",
        "What happens in the heart during systole and diastole?",
        "ch02-heart#systole-and-diastole",
    ),
    ("q24", "How does mucus keep the airways clean?", "ch03-lungs#the-mucociliary-escalator"),
    ("q25", "How does the diaphragm move air into the lungs?", "ch03-lungs#inspiration"),
    ("q26", "Where does the small intestine absorb nutrients?", "ch04-digestion#absorption"),
]

# Conversations: the follow-ups name their topic only through the first turn.
CONVERSATIONS = [
    (
        "c1",
        "migraine",
        ["What is a migraine aura?", "How is it treated during an attack?"],
        ["migraine#aura", "migraine#during-an-attack"],
    ),
    (
        "c2",
        "ibuprofen",
        [
            "What are the side effects of ibuprofen?",
            "Can I take it while pregnant?",
            "And for children?",
        ],
        ["ibuprofen#side-effects", "ibuprofen#pregnancy", "ibuprofen#children"],
    ),
    (
        "c3",
        "tantrums",
        ["Why do toddlers have tantrums?", "What should I do during one?"],
        ["toddler-tantrums#why-tantrums-happen", "toddler-tantrums#stay-calm"],
    ),
    (
        "c4",
        "the alveoli",
        ["Why are the alveoli good at gas exchange?", "And how is breathing controlled?"],
        ["ch03-lungs#the-alveoli-and-gas-exchange", "ch03-lungs#control-of-breathing"],
    ),
]


@dataclass(frozen=True)
class Section:
    corpus_id: str
    file: str  # the sample file's name, as a sections TSV names it
    kb: str
    heading: str
    title: str  # "<document title>: <heading>"
    text: str


def slug(heading: str) -> str:
    return _SLUG.sub("-", heading.lower()).strip("-")


def sections(root: Path = SAMPLE_KB_DIR) -> list[Section]:
    """Every Markdown section with text of the sample knowledge bases, in file order."""
    out: list[Section] = []
    for kb in KBS:
        for path in sorted((root / kb).glob("*.md")):
            out.extend(_split(path, kb))
    ids = [s.corpus_id for s in out]
    if len(set(ids)) != len(ids):
        raise ConfigError("the sample knowledge bases have two sections with one id")
    return out


def _split(path: Path, kb: str) -> list[Section]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[end + 1 :]
    found: list[Section] = []
    heading, document = "", path.stem
    body: list[str] = []

    def close() -> None:
        text = " ".join(" ".join(body).split())
        if heading and text:
            title = heading if heading == document else f"{document}: {heading}"
            found.append(
                Section(f"{path.stem}#{slug(heading)}", path.name, kb, heading, title, text)
            )

    for line in lines:
        match = _HEADING.match(line)
        if match:
            close()
            heading, body = match.group(2), []
            if len(match.group(1)) == 1:
                document = heading
        else:
            body.append(line)
    close()
    return found


def write_example(folder: Path) -> dict[str, Path]:
    """Writes the set into ``folder``; returns the files by kind. Refuses to overwrite files
    it did not write (a folder holding other things)."""
    known = {s.corpus_id: s for s in sections()}
    gold_ids = [g for _, _, g in QUESTIONS] + [g for *_, golds in CONVERSATIONS for g in golds]
    missing = sorted(set(gold_ids) - set(known))
    if missing:
        raise ConfigError(f"example gold sections not in the samples: {', '.join(missing)}")
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "corpus": folder / "corpus.jsonl",
        "queries": folder / "queries.jsonl",
        "qrels": folder / "qrels.tsv",
        "sections": folder / "sections.tsv",
        "conversations": folder / "conversations.jsonl",
    }
    corpus = [
        json.dumps({"_id": s.corpus_id, "title": s.title, "text": s.text, "kb": s.kb})
        for s in known.values()
    ]
    queries = [json.dumps({"_id": qid, "text": text}) for qid, text, _ in QUESTIONS]
    qrels = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{g}\t1" for q, _, g in QUESTIONS]
    tsv = ["question\tfile\tsection"] + [
        f"{text}\t{known[g].file}\t{known[g].heading}"
        for _, text, g in QUESTIONS
        if known[g].kb == "medical"
    ]
    conversations = [
        json.dumps(
            {
                "id": cid,
                "topic": topic,
                "turns": [
                    {"message": m, "gold_doc": g} for m, g in zip(messages, golds, strict=True)
                ],
            }
        )
        for cid, topic, messages, golds in CONVERSATIONS
    ]
    for kind, lines in (
        ("corpus", corpus),
        ("queries", queries),
        ("qrels", qrels),
        ("sections", tsv),
        ("conversations", conversations),
    ):
        files[kind].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files
