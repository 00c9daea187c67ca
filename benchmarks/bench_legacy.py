"""Old Office files (.doc, .xls, .ppt; issue 35): files per second and fidelity against the same
file saved in the new format, for LibreOffice (what ragchat uses) and for the small readers
(antiword, catdoc, xls2csv, catppt).

The sample files of ``tests/ingest/samples.py`` (a Word handbook with headings and a table, a
deck of six slides with a table and speaker notes, a workbook of two sheets) are written in the
new format, saved in the old one by LibreOffice, then read back:

- ``ragchat`` (LibreOffice headless → the new format → ragchat's loader): the share of the new
  file's lines (prose lines and table rows naming their columns) read identically from the old
  file, and of its citations (heading path, slide, sheet and rows) kept;
- the small readers: the share of the new file's words found in their plain-text output (they
  keep no heading, slide or row to cite).

Seconds are wall time per file, LibreOffice with a fresh profile each time (as an upload gets).

    .venv/bin/python benchmarks/bench_legacy.py
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragchat.ingest import legacy
from ragchat.ingest.pipeline import load_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the sample files live in tests/
from tests.ingest import samples

FILES = [
    ("handbook.docx", samples.write_docx, "doc", ["antiword", "catdoc"]),
    ("review.pptx", samples.write_pptx, "ppt", ["catppt"]),
    ("formulary.xlsx", samples.write_xlsx, "xls", ["xls2csv"]),
]
_CITE = ("heading_path", "slide", "sheet")


def _lines(path: Path) -> set[tuple[str, str]]:
    [doc] = load_file(path)
    out = set()
    for section in doc.sections:
        where = "/".join(str(section.metadata.get(k, "")) for k in _CITE)
        out |= {(where, line) for line in section.text.split("\n") if line.strip()}
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def main() -> None:
    if legacy.soffice() is None:
        sys.exit(legacy.MISSING)
    print("| file | reader | s/file | lines read identically | citations kept | words found |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, write, old, small in FILES:
            new = folder / name
            write(new)
            subprocess.run(
                ["soffice", "--headless", "--convert-to", old, "--outdir", str(folder), str(new)],
                check=True,
                capture_output=True,
            )
            old_path = folder / f"{new.stem}.{old}"
            truth = _lines(new)
            truth_words = _words("\n".join(line for _, line in truth))
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                got = _lines(old_path)
                times.append(time.perf_counter() - t0)
            same_text = {line for _, line in truth} & {line for _, line in got}
            got_words = _words(" ".join(line for _, line in got))
            print(
                f"| {old_path.name} | ragchat (LibreOffice) | {min(times):.2f} | "
                f"{len(same_text)}/{len(truth)} | {len(truth & got)}/{len(truth)} | "
                f"{len(truth_words & got_words)}/{len(truth_words)} |"
            )
            for tool in small:
                if shutil.which(tool) is None:
                    print(f"| {old_path.name} | {tool} | not installed | | | |")
                    continue
                t0 = time.perf_counter()
                text = subprocess.run(
                    [tool, str(old_path)], capture_output=True, check=False
                ).stdout.decode("utf-8", "replace")
                took = time.perf_counter() - t0
                lines = {ln.strip() for ln in text.splitlines() if ln.strip()}
                same = {line for _, line in truth} & lines
                found = len(truth_words & _words(text))
                print(
                    f"| {old_path.name} | {tool} | {took:.3f} | {len(same)}/{len(truth)} | – | "
                    f"{found}/{len(truth_words)} |"
                )


if __name__ == "__main__":
    main()
