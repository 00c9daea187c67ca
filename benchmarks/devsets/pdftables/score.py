"""Scores ``ragchat eval documents`` replies on the table questions of ``make_pdfs.py``: the
share whose reply quotes the right row with its column names — the asked column's name
followed by the key fact ("Saturday: 06:57"), from the right page. A reply of bare cells
("Market Square 06:07 06:57 08:32") has the fact but not which column it is.

    .venv/bin/python benchmarks/devsets/pdftables/score.py QUESTIONS.jsonl OUTPUT/replies.csv
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path


def main(questions: Path, replies: Path) -> None:
    wanted = {}
    for line in questions.read_text().splitlines():
        record = json.loads(line)
        wanted[record["id"]] = (record["column"], record["facts"][0])
    rows = list(csv.DictReader(replies.open()))
    named = fact = place = 0
    for row in rows:
        column, variants = wanted[row["qid"]]
        reply = " ".join(row["reply"].split())
        fact += row["found"] == "1"
        place += row["right_place"] == "True"
        pattern = re.escape(column) + r": [^;]*?(" + "|".join(map(re.escape, variants)) + ")"
        hit = row["right_place"] == "True" and re.search(pattern, reply) is not None
        named += hit
        if not hit:
            print(f"  miss {row['qid']}: {row['question']} -> {reply[:110]}")
    n = len(rows)
    print(
        f"right row with column names: {named}/{n}; key fact: {fact}/{n}; right page: {place}/{n}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
