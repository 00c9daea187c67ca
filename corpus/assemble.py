"""Assembles the corpus from the writers' folders: copies the documents, resolves each answer's
place from the document as ragchat's loaders read it, assigns the frozen split, and writes the
JSONL files of this folder.

Run once (the split is frozen: re-running keeps every document's split and group from
``documents.jsonl`` and only assigns new documents):

    .venv/bin/python corpus/assemble.py STAGING_DIR [STAGING_DIR ...]

A place is resolved by finding the answer's evidence (the sentence, row or spoken words the
writer copied from the document) in the loaded sections: the heading path of the section that
holds it, its page, slide, spreadsheet row, or the time range of the captions that hold it. The
writer's own hint breaks ties and is kept when the evidence cannot be found (reported).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ragchat.ingest.registry import loader_for
from ragchat.ingest.text_utils import format_ts
from ragchat.types import Section

HERE = Path(__file__).parent
DOCS = HERE / "docs"
SPLITS = ("train", "val", "test")
SEED = 34
GROUP_SIZE = 7  # documents per knowledge base when evaluating (a user's own collection)

_FOLD = str.maketrans(
    {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‑": "-", "‐": "-",
     "−": "-", "\u00a0": " ", "•": " "}
)


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    text = re.sub(r"[*_#`|;:]", " ", text)
    text = re.sub(r"(?<=\w)\.(?=\s|$)", " ", text)
    return " ".join(text.split())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )


class Located:
    """A document's sections as the loaders read them, searchable by evidence."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sections: list[Section] = []
        self.scan_pages: list[str] = []
        source = path.with_name(path.name + ".source.txt")
        if source.exists():  # a scan: its pages are what the writer drew
            self.scan_pages = [norm(p) for p in source.read_text(encoding="utf-8").split("\f")]
        else:
            for doc in loader_for(path).load(path):
                self.sections.extend(doc.sections)
        self.normed = [norm(s.text) for s in self.sections]

    def find(self, evidence: str, hint: dict[str, Any]) -> dict[str, Any] | None:
        parts = [norm(p) for p in evidence.split(" | ") if p.strip()]
        whole = norm(evidence.replace(" | ", " "))
        if self.scan_pages:
            pages = [
                i + 1 for i, text in enumerate(self.scan_pages)
                if whole in text or all(p in text for p in parts)
            ]
            page = _pick(pages, hint.get("page"))
            return None if page is None else {"page": page}
        found: list[dict[str, Any]] = []
        for i, section in enumerate(self.sections):
            place = self._in_section(section, self.normed[i], parts, whole)
            if place is not None:
                found.append(place)
        if not found:
            # evidence running over two sections (steps across pages, a sentence finished by
            # the next speaker): the place of its first part, else its longest part
            if len(parts) > 1 or "." in whole:
                pieces = parts if len(parts) > 1 else [norm(x) for x in re.split(r"(?<=[.!?])\s+", evidence) if x.strip()]
                for piece in [pieces[0], max(pieces, key=len)]:
                    if len(piece) >= 20 and piece != whole:
                        place = self.find(piece, hint)
                        if place is not None:
                            return place
            return None
        return _best(found, hint)

    def _in_section(
        self, section: Section, text: str, parts: list[str], whole: str
    ) -> dict[str, Any] | None:
        md = section.metadata
        if section.table:
            lines = section.text.split("\n")
            for n, line in enumerate(lines):
                ln = norm(line)
                if all(p in ln for p in parts):
                    place: dict[str, Any] = {}
                    if section.row_numbers:
                        place["row"] = section.row_numbers[n]
                    return _located(md) | place
            if not (whole in text or all(p in text for p in parts)):
                return None
            return _located(md)
        if whole in text or (len(parts) > 1 and all(p in text for p in parts)):
            place = _located(md)
            if section.spans:
                span = _time_range(section, evidence_words=parts)
                if span is not None:
                    place |= span
            return place
        return None


def _located(md: dict[str, Any]) -> dict[str, Any]:
    if "slide" in md:
        return {"slide": int(md["slide"])}
    if "sheet" in md:
        return {"sheet": str(md["sheet"])}
    if "page" in md and "heading_path" not in md:
        return {"page": int(md["page"])}
    if md.get("heading_path"):
        return {"heading": [str(h) for h in md["heading_path"]]}
    if "page" in md:
        return {"page": int(md["page"])}
    return {}


def _time_range(section: Section, evidence_words: list[str]) -> dict[str, Any] | None:
    """The captions holding the evidence: its first and last word's character offsets in the
    section, mapped through the section's spans."""
    text = section.text
    low = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    first = evidence_words[0]
    words = first.split()
    # find the evidence start by its first few words, tolerant of punctuation differences
    pattern = r"\W+".join(re.escape(w.strip(".,;:!?")) for w in words[:6] if w.strip(".,;:!?"))
    m = re.search(pattern, low)
    if m is None:
        return None
    tail = evidence_words[-1].split()
    pattern_end = r"\W+".join(re.escape(w.strip(".,;:!?")) for w in tail[-6:] if w.strip(".,;:!?"))
    m_end = None
    for cand in re.finditer(pattern_end, low):
        if cand.end() >= m.start():
            m_end = cand
            break
    a, b = m.start(), (m_end.end() if m_end else m.end())
    spans = [s for s in section.spans if s.start_char < b and s.end_char > a]
    if not spans:
        return None
    return {"start": format_ts(spans[0].start), "end": format_ts(spans[-1].end)}


def _pick(options: list[int], hint: Any) -> int | None:
    if not options:
        return None
    if hint is not None and int(hint) in options:
        return int(hint)
    return options[0]


def _best(found: list[dict[str, Any]], hint: dict[str, Any]) -> dict[str, Any]:
    """Of several sections holding the evidence, the one the writer meant."""
    def agrees(place: dict[str, Any]) -> int:
        score = 0
        for key in ("page", "slide", "sheet", "row"):
            if key in hint and key in place and str(hint[key]) == str(place[key]):
                score += 2
        section = norm(str(hint.get("section") or ""))
        if section and "heading" in place and section == norm(place["heading"][-1]):
            score += 3
        elif section and "heading" in place and section in norm(" ".join(place["heading"])):
            score += 1
        return score

    return max(found, key=agrees)


def _hint_place(hint: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("page", "slide", "sheet", "row", "start", "end"):
        if key in hint:
            out[key] = hint[key]
    if "section" in hint and not out:
        out["heading"] = [str(hint["section"])]
    return out


# The writers' own names for what they wrote → the corpus's kinds of document.
KINDS = {
    "meeting minutes": "meeting transcript",
    "school trip information slides": "travel plan",
    "study skills workshop slides": "study guide",
    "dissertation handbook": "study guide",
    "price list": "price list or rota",
    "staff rota and pay rates": "price list or rota",
    "rota": "price list or rota",
    "timetable": "price list or rota",
    "IT how-to guide": "IT how-to",
    "IT security awareness training slides": "IT how-to",
    "recipes": "recipe",
    "recipes and allergen file": "recipe",
    "club/community paper": "club or community paper",
    "club handbook": "club or community paper",
    "club fees and rules workbook": "club or community paper",
    "club constitution": "club or community paper",
}


def kind_of(writer_kind: str) -> str:
    if writer_kind.startswith("letter from"):
        return "letter from a landlord or bank"
    return KINDS.get(writer_kind, writer_kind)


def _draw(docs: list[dict[str, Any]], seed: int) -> list[str]:
    """One stratified draw: each kind's documents shuffled, then one in five to val and one in
    five to test, counting across kinds in turn."""
    rng = random.Random(seed)
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        by_kind[doc["kind"]].append(i)
    out = [""] * len(docs)
    n = 0
    for kind in sorted(by_kind):
        members = by_kind[kind]
        rng.shuffle(members)
        for i in members:
            out[i] = ("val", "test", "train", "train", "train")[n % 5]
            n += 1
    return out


def _family(fmt: str) -> str:
    if "scan" in fmt:
        return "scan"
    return {"xlsx": "sheet", "csv": "sheet", "tsv": "sheet"}.get(fmt, fmt)


def _balance(docs: list[dict[str, Any]], splits: list[str]) -> int:
    """How many (format family, held-out split) pairs a draw covers: val and test should each
    hold every family of format, as they each hold every kind."""
    return len({(_family(d["format"]), s) for d, s in zip(docs, splits, strict=True)
                if s != "train"})


def assign_splits(documents: list[dict[str, Any]]) -> None:
    """60/20/20 by document, stratified by kind (each kind's documents shuffled with a fixed
    seed; one in five to val, one in five to test, the rest to train); documents that already
    have a split keep it. Then groups of about ``GROUP_SIZE`` documents per split, mixing
    kinds, each evaluated as one knowledge base."""
    new = [d for d in sorted(documents, key=lambda d: d["file"]) if "split" not in d]
    if new:
        best = max(range(1, 501), key=lambda seed: (_balance(new, _draw(new, seed)), -seed))
        for doc, split in zip(new, _draw(new, best), strict=True):
            doc["split"] = split
    for split in SPLITS:
        docs = sorted(
            (d for d in documents if d["split"] == split and "group" not in d),
            key=lambda d: (d["kind"], d["file"]),
        )
        if not docs:
            continue
        existing = {d["group"] for d in documents if d["split"] == split and "group" in d}
        n_groups = max(1, round(len(docs) / GROUP_SIZE))
        for i, doc in enumerate(docs):  # round robin over kinds sorted: groups mix kinds
            doc["group"] = f"{split}-{i % n_groups + 1 + len(existing)}"


def main(stagings: list[Path]) -> int:
    DOCS.mkdir(parents=True, exist_ok=True)
    documents = {d["file"]: d for d in read_jsonl(HERE / "documents.jsonl")}
    questions: list[dict[str, Any]] = []
    conversations: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    problems: list[str] = []
    for staging in stagings:
        writer = staging.name
        for meta in read_jsonl(staging / "documents.jsonl"):
            src = staging / "docs" / meta["file"]
            if not src.exists():
                problems.append(f"{writer}: {meta['file']} listed but missing")
                continue
            shutil.copy2(src, DOCS / src.name)
            source = src.with_name(src.name + ".source.txt")
            if source.exists():
                shutil.copy2(source, DOCS / source.name)
            old = documents.get(meta["file"], {})
            record = {
                "file": meta["file"],
                "kind": kind_of(str(meta.get("kind", ""))),
                "format": src.suffix.lstrip(".").lower() + (" scan" if source.exists() else ""),
                "scan": source.exists(),
                "title": meta.get("title", ""),
                "summary": meta.get("summary", ""),
                "features": meta.get("features", []),
                "writer": writer,
            }
            for key in ("split", "group"):
                if key in old:
                    record[key] = old[key]
            documents[meta["file"]] = record
        questions += read_jsonl(staging / "questions.jsonl")
        conversations += read_jsonl(staging / "conversations.jsonl")
        messages += read_jsonl(staging / "messages.jsonl")

    located: dict[str, Located] = {}

    def resolve(where: str, rec: dict[str, Any]) -> dict[str, Any]:
        file = rec["file"]
        if file not in located:
            located[file] = Located(DOCS / file)
        hint = rec.get("place") or {}
        place = located[file].find(rec.get("evidence", ""), hint)
        if place is None:
            problems.append(f"{where}: evidence not located in {file}; the writer's place kept")
            place = _hint_place(hint)
        return {"file": file, **place}

    docs = list(documents.values())
    assign_splits(docs)
    split_of = {d["file"]: d for d in docs}
    out_q: list[dict[str, Any]] = []
    for rec in questions:
        doc = split_of.get(rec.get("file", ""))
        if doc is None:
            problems.append(f"{rec.get('id')}: unknown file {rec.get('file')!r}")
            continue
        base = {
            "id": rec["id"],
            "question": rec["question"],
            "answerable": bool(rec.get("answerable", True)),
            "style": rec.get("style", ""),
            "file": rec["file"],
            "split": doc["split"],
            "group": doc["group"],
            "kind": doc["kind"],
            "format": doc["format"],
        }
        if base["answerable"]:
            base |= {
                "facts": rec["facts"],
                "where": rec.get("where", "prose"),
                "evidence": rec.get("evidence", ""),
                "place": resolve(rec["id"], rec),
            }
        else:
            base |= {"near": rec["file"], "why": rec.get("why", "")}
        out_q.append(base)
    out_c: list[dict[str, Any]] = []
    for rec in conversations:
        doc = split_of.get(rec.get("file", ""))
        if doc is None:
            problems.append(f"{rec.get('id')}: unknown file {rec.get('file')!r}")
            continue
        turns = []
        for i, turn in enumerate(rec.get("turns") or [], 1):
            t: dict[str, Any] = {"message": turn["message"]}
            if turn.get("answerable", True) and "facts" in turn:
                t |= {
                    "facts": turn["facts"],
                    "where": turn.get("where", "prose"),
                    "evidence": turn.get("evidence", ""),
                    "place": resolve(f"{rec['id']} turn {i}", {**turn, "file": rec["file"]}),
                }
            else:
                t["answerable"] = False
            turns.append(t)
        out_c.append(
            {
                "id": rec["id"],
                "file": rec["file"],
                "split": doc["split"],
                "group": doc["group"],
                "kind": doc["kind"],
                "format": doc["format"],
                "turns": turns,
            }
        )
    out_m = []
    for rec in messages:
        doc = split_of.get(rec.get("file", ""))
        if doc is None:
            problems.append(f"{rec.get('id')}: unknown file {rec.get('file')!r}")
            continue
        out_m.append(
            {
                "id": rec["id"],
                "message": rec["message"],
                "looks_like": rec.get("looks_like", "plain"),
                "file": rec["file"],
                "split": doc["split"],
                "group": doc["group"],
            }
        )
    write_jsonl(HERE / "documents.jsonl", sorted(docs, key=lambda d: d["file"]))
    write_jsonl(HERE / "questions.jsonl", out_q)
    write_jsonl(HERE / "conversations.jsonl", out_c)
    write_jsonl(HERE / "messages.jsonl", out_m)
    by_split = Counter(d["split"] for d in docs)
    print("documents:", dict(by_split), "groups:", len({d["group"] for d in docs}))
    for split in SPLITS:
        qs = [q for q in out_q if q["split"] == split]
        print(
            f"{split}: {sum(q['answerable'] for q in qs)} answerable, "
            f"{sum(not q['answerable'] for q in qs)} unanswerable, "
            f"{sum(c['split'] == split for c in out_c)} conversations, "
            f"{sum(m['split'] == split for m in out_m)} messages"
        )
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(problems)} problem(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(p) for p in sys.argv[1:]]))
