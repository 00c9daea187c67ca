"""Writes a deterministic MedQuAD dev subset for retrieval evaluation (nothing goes into the repo).

The subset is every page of a fixed list of ``kb/`` sources (default: 5_NIDDK_QA, 6_NINDS_QA,
7_SeniorHealth_QA, 9_CDC_QA) and, for the flat corpus, the ``corpus.jsonl`` records that belong
to those pages. Output (default ``/tmp/medquad-subset``)::

    corpus.jsonl        flat records of the subset pages (ingest with ``ragchat ingest``)
    queries.jsonl       questions answered by a record of corpus.jsonl     (use with qrels.tsv)
    qrels.tsv
    queries.md.jsonl    questions answered by a section of a subset page   (use with sections.tsv)
    sections.tsv
    paths.txt           the kb/ folders to ingest for the Markdown knowledge base

Why it is not a plain filter on ids: in the shared files, MedQuAD's question ids are unique per
source only. ``queries.dev.jsonl`` repeats ids (8,063 lines, 5,950 distinct ids) and
``corpus.jsonl`` kept one record per id, so a question of one source can point, through its id,
at another source's record. The three dev files are aligned line by line, though, so each line
is one (question, corpus id, file + section) triple. Here:

* a record belongs to the page ``<source>/<stem>.md`` whose stem is the id before its last
  ``-`` and whose ``# Title`` equals the record's title (unique for all but one record);
* a question line counts for the flat set only when its corpus record belongs to the page its
  section gold names (otherwise the record answering it was lost to an id collision);
* question ids are made unique as ``<source>:<id>`` (plus ``#n`` when one source repeats an id
  with another text); lines repeating the same question are merged (their golds united).

Usage: ``.venv/bin/python benchmarks/eval_medquad_subset.py [--out DIR] [--sources a,b]``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from _common import DATA

DEFAULT_SOURCES = ("5_NIDDK_QA", "6_NINDS_QA", "7_SeniorHealth_QA", "9_CDC_QA")


def page_titles(kb: Path) -> dict[tuple[str, str], list[str]]:
    """(file stem, H1 title) → kb-relative page paths."""
    pages: dict[tuple[str, str], list[str]] = defaultdict(list)
    for source in sorted(p for p in kb.iterdir() if p.is_dir()):
        for page in sorted(source.glob("*.md")):
            with page.open(encoding="utf-8") as fh:
                first = fh.readline().strip()
            title = first[2:].strip() if first.startswith("# ") else ""
            pages[(page.stem, title)].append(f"{source.name}/{page.name}")
    return pages


def build(data: Path, out: Path, sources: tuple[str, ...]) -> dict[str, int]:
    kb = data / "kb"
    pages = page_titles(kb)
    page_of: dict[str, str] = {}
    records: list[dict[str, str]] = []
    with (data / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            cid = str(rec["_id"])
            found = pages.get((cid.rsplit("-", 1)[0], str(rec.get("title") or "").strip()), [])
            if len(found) == 1:
                page_of[cid] = found[0]
                if found[0].split("/", 1)[0] in sources:
                    records.append(rec)

    def lines(name: str) -> list[str]:
        return [x for x in (data / name).read_text(encoding="utf-8").splitlines() if x.strip()]

    queries = [json.loads(x) for x in lines("queries.dev.jsonl")]
    qrels = [x.split("\t") for x in lines("qrels.dev.tsv")[1:]]
    sections = [x.split("\t") for x in lines("sections.dev.tsv")[1:]]
    if not len(queries) == len(qrels) == len(sections):
        raise SystemExit("queries, qrels and sections are not aligned line by line")

    # (source, id, text) → unique id, corpus golds (flat) and section golds (Markdown)
    ids: dict[tuple[str, str, str], str] = {}
    texts_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    flat: dict[str, set[str]] = defaultdict(set)
    md: dict[str, set[tuple[str, str]]] = defaultdict(set)
    text_of: dict[str, str] = {}
    for q, (qid, cid, _), (sqid, file, section) in zip(queries, qrels, sections, strict=True):
        if not str(q["_id"]) == qid == sqid:
            raise SystemExit(f"line mismatch at query {q['_id']}")
        source = file.split("/", 1)[0]
        if source not in sources:
            continue
        key = (source, qid, str(q["text"]))
        if key not in ids:
            seen = texts_of[(source, qid)]
            seen.append(key[2])
            ids[key] = f"{source}:{qid}" + (f"#{len(seen)}" if len(seen) > 1 else "")
        uid = ids[key]
        text_of[uid] = key[2]
        md[uid].add((file, section))
        if page_of.get(cid) == file:
            flat[uid].add(cid)

    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for rec in sorted(records, key=lambda r: str(r["_id"])):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def write_queries(name: str, wanted: list[str]) -> None:
        with (out / name).open("w", encoding="utf-8") as fh:
            for uid in wanted:
                fh.write(json.dumps({"_id": uid, "text": text_of[uid]}, ensure_ascii=False) + "\n")

    flat_ids = sorted(uid for uid, golds in flat.items() if golds)
    md_ids = sorted(md)
    write_queries("queries.jsonl", flat_ids)
    write_queries("queries.md.jsonl", md_ids)
    (out / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{uid}\t{cid}\t1\n" for uid in flat_ids for cid in sorted(flat[uid])),
        encoding="utf-8",
    )
    (out / "sections.tsv").write_text(
        "query-id\tfile\tsection\n"
        + "".join(f"{uid}\t{f}\t{s}\n" for uid in md_ids for f, s in sorted(md[uid])),
        encoding="utf-8",
    )
    (out / "paths.txt").write_text("".join(f"{kb / s}\n" for s in sources), encoding="utf-8")
    return {
        "records": len(records),
        "flat_queries": len(flat_ids),
        "pages": sum(len(list((kb / s).glob("*.md"))) for s in sources),
        "md_queries": len(md_ids),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "medquad")
    parser.add_argument("--out", type=Path, default=Path("/tmp/medquad-subset"))
    parser.add_argument("--sources", default=",".join(DEFAULT_SOURCES))
    args = parser.parse_args()
    sources = tuple(s.strip() for s in args.sources.split(",") if s.strip())
    counts = build(args.data, args.out, sources)
    print(f"wrote {args.out}: " + ", ".join(f"{k}={v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
