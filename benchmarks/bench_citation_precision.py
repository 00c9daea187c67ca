"""How precise citations are on the example documents (``examples/``): one question per row of
the fees spreadsheet and one per caption of the committee meeting, asked over ``POST /chat``
of the real offline engine; for each answer, whether its citation names the one row / the one
cue the answer is about, a range that holds it, or misses it. Prints the table and every miss.

    .venv/bin/python benchmarks/bench_citation_precision.py [--before]

``--before``: the citations as the answerer made them, without ``agents/shared/pinpoint.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_line, print_table
from fastapi.testclient import TestClient

from ragchat import resources
from ragchat.api import create_app
from ragchat.settings import ApiSettings, Settings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ROWS = [  # (question, the spreadsheet row that answers it)
    ("How much is full membership?", 2),
    ("What does junior membership cost?", 3),
    ("How much is family membership?", 4),
    ("What is the fee for dinghy storage?", 5),
    ("How much is a mooring?", 6),
    ("How much does a locker cost?", 7),
    ("What does guest day sailing cost?", 8),
]
CUES = [  # (question, start of the caption that answers it)
    ("When is the summer regatta?", "00:00:10.000"),
    ("Who is the race officer?", "00:00:19.500"),
    ("How many volunteers are needed for the committee boat?", "00:00:19.500"),
    ("When will the council repair the slipway?", "00:00:31.500"),
    ("Has the rescue boat engine been paid for?", "00:00:44.500"),
    ("When are the junior training sessions?", "00:00:58.500"),
    ("When is the club barbecue?", "00:01:12.500"),
    ("When is the next committee meeting?", "00:01:25.500"),
]


def main() -> None:
    if "--before" in sys.argv:
        from ragchat.agents import engine

        engine.pinpoint = lambda reply, citations: list(citations)  # type: ignore[assignment]
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), api=ApiSettings(rate_limit_per_minute=0))
        app = create_app(settings, embedder=resources.embedder(settings), bootstrap=False)
        with TestClient(app) as client:
            client.get("/users/me")
            files = [
                ("files", (n, (EXAMPLES / n).read_bytes()))
                for n in ("members-guide.docx", "committee-meeting.vtt", "fees-and-tides.xlsx")
            ]
            job = client.post("/kb/club/documents", files=files).json()["job_id"]
            while client.get(f"/jobs/{job}").json()["status"] not in ("done", "failed"):
                time.sleep(0.2)
            rows: list[tuple[str, int, int, int, int, int]] = []
            notes: list[tuple[str, str, str, list[str]]] = []
            for kind, cases in (("spreadsheet cell", ROWS), ("transcript sentence", CUES)):
                exact = holds = missed = refused = 0
                for question, want in cases:
                    reply = client.post("/chat", json={"message": question, "kb": "club"}).json()
                    cited = reply["citations"]
                    if reply.get("no_answer") or not cited:
                        refused += 1  # the answerer's call, not the citation's
                        notes.append(("not answered", question, reply["message"][:70], []))
                        continue
                    if kind == "spreadsheet cell":
                        spans = [tuple(c["rows"]) for c in cited if c.get("rows")]
                        one = (want, want) in spans
                        within = any(a <= want <= b for a, b in spans)
                    else:
                        spans = [(c["start_ts"], c["end_ts"]) for c in cited if c.get("start_ts")]
                        one = any(a == want and b <= _next(want) for a, b in spans)
                        within = any(a <= want < b for a, b in spans)
                    exact += one
                    holds += within and not one
                    missed += not within
                    if not one:
                        label = "wider range" if within else "missed"
                        where = [c["location"] for c in cited]
                        notes.append((label, question, reply["message"][:110], where))
                rows.append((kind, len(cases), refused, exact, holds, missed))
    print_table(
        ["question about", "asked", "not answered", "cited exactly", "a wider range", "missed"],
        rows,
    )
    for label, question, answer, spans in notes:
        print(f"- {label}: {question!r}: {answer!r} cited {spans}")


def _next(start: str) -> str:
    """The end of the caption that starts at ``start`` (its own end, not a later one's)."""
    ends = {
        "00:00:10.000": "00:00:19.000",
        "00:00:19.500": "00:00:31.000",
        "00:00:31.500": "00:00:44.000",
        "00:00:44.500": "00:00:58.000",
        "00:00:58.500": "00:01:12.000",
        "00:01:12.500": "00:01:25.000",
        "00:01:25.500": "00:01:36.000",
    }
    return ends[start]


if __name__ == "__main__":
    main()
