"""Citations narrowed to what the reply quoted: the spreadsheet row(s), the transcript cues."""

from __future__ import annotations

from ragchat.agents.shared.pinpoint import pinpoint
from ragchat.types import Chunk, Citation, Hit, citation_from_hit

FEES = [
    "Item: Full membership; Fee: 240 EUR; Notes: per year.",
    "Item: Junior membership; Fee: 60 EUR; Notes: under 18.",
    "Item: Family membership; Fee: 380 EUR; Notes: two adults and their children.",
    "Item: Dinghy storage; Fee: 95 EUR; Notes: per season, on the dinghy park.",
    "Item: Mooring; Fee: 410 EUR; Notes: per season, swinging mooring.",
    "Item: Locker; Fee: 35 EUR; Notes: per year.",
    "Item: Guest day sailing; Fee: 12 EUR; Notes: per day.",
]
MEETING = [
    ("Maria Lopez", 2.0, 9.5, "Welcome, everyone, to the June committee meeting."),
    ("Maria Lopez", 10.0, 19.0, "First item: the summer regatta is on Saturday the 13th of June."),
    ("Tom Reid", 19.5, 31.0, "The race officer will be Helen Park."),
    ("Tom Reid", 31.5, 44.0, "We still need two volunteers for the committee boat."),
    ("Maria Lopez", 85.5, 96.0, "The next committee meeting is on the 8th of July."),
]


def fees_citation(rows: list[int] | None = None) -> Citation:
    chunk = Chunk(
        "fees_sh0t_c0",
        "fees",
        "\n".join(FEES),
        0,
        metadata={
            "source": "/data/uploads/club/u/fees-and-tides.xlsx",
            "title": "fees-and-tides",
            "sheet": "Fees 2026",
            "table": True,
            "rows": rows or [2, 8],
        },
    )
    return citation_from_hit(Hit(chunk, 0.9), 1)


def meeting_citation() -> Citation:
    text, cues = "", []
    for speaker, start, end, said in MEETING:
        line = f"{speaker}: {said}"
        if text:
            text += " "
        cues.append([len(text), len(text) + len(line), start, end, speaker])
        text += line
    chunk = Chunk(
        "meet_t0_c0",
        "meet",
        text,
        0,
        metadata={
            "source": "/data/uploads/club/u/committee-meeting.vtt",
            "title": "committee-meeting",
            "start_ts": "00:00:02.000",
            "end_ts": "00:01:36.000",
            "speakers": ["Maria Lopez", "Tom Reid"],
            "cues": cues,
        },
    )
    return citation_from_hit(Hit(chunk, 0.9), 1)


def test_a_quoted_row_is_cited_by_its_row() -> None:
    assert fees_citation().location == "Fees 2026, rows 2–8"
    reply = "Item: Mooring; Fee: 410 EUR; Notes: per season, swinging mooring [1]."
    [cited] = pinpoint(reply, [fees_citation()])
    assert (cited.location, cited.rows) == ("Fees 2026, row 6", (6, 6))
    assert cited.quote == FEES[4]
    assert cited.to_dict()["rows"] == [6, 6] and "hit" not in cited.to_dict()


def test_a_model_s_paraphrase_finds_its_row_too() -> None:
    [cited] = pinpoint("A swinging mooring costs 410 EUR a season [1].", [fees_citation()])
    assert cited.location == "Fees 2026, row 6"


def test_several_rows_quoted_are_named_each() -> None:
    reply = "A locker is 35 EUR a year [1]. Guest day sailing costs 12 EUR per day [1]."
    [cited] = pinpoint(reply, [fees_citation()])
    assert cited.location == "Fees 2026, rows 7–8"
    reply = "Juniors pay 60 EUR [1], and a locker is 35 EUR [1]."
    [cited] = pinpoint(reply.replace("[1], and", "[1]. And"), [fees_citation()])
    assert cited.location == "Fees 2026, rows 3 and 7"


def test_a_quote_that_fits_many_rows_keeps_the_range() -> None:
    for reply in ("Fees are in EUR [1].", "Some fees are per season, others per year [1]."):
        [cited] = pinpoint(reply, [fees_citation()])
        assert cited.location == "Fees 2026, rows 2–8"
    # Rows that cannot be paired with the passage's lines (a gap in the numbers): unchanged.
    [cited] = pinpoint(FEES[4] + " [1]", [fees_citation([2, 11])])
    assert cited.location == "Fees 2026, rows 2–11"


def test_a_quoted_sentence_is_cited_by_its_cue() -> None:
    assert meeting_citation().location == "00:00:02.000–00:01:36.000 (Maria Lopez, Tom Reid)"
    [cited] = pinpoint("Helen Park will be the race officer [1].", [meeting_citation()])
    assert cited.location == "00:00:19.500–00:00:31.000 (Tom Reid)"
    assert (cited.start_ts, cited.end_ts, cited.speakers) == (
        "00:00:19.500",
        "00:00:31.000",
        ("Tom Reid",),
    )


def test_only_the_citation_a_sentence_names_is_narrowed() -> None:
    reply = "The next committee meeting is on the 8th of July [2]. A mooring is 410 EUR [1]."
    fees = fees_citation()
    meeting = Citation(**{**meeting_citation().__dict__, "index": 2})
    cited = pinpoint(reply, [fees, meeting])
    assert cited[0].location == "Fees 2026, row 6"
    assert cited[1].location == "00:01:25.500–00:01:36.000 (Maria Lopez)"


def test_citations_without_their_passage_or_quote_are_unchanged() -> None:
    bare = Citation(1, "c", "notes.md", "Notes", "Intro", 0.5, "preview")
    assert pinpoint("Something [1].", [bare]) == [bare]
    assert pinpoint("Nothing cited here.", [fees_citation()])[0].location == "Fees 2026, rows 2–8"


def test_captions_quoted_far_apart_are_named_each() -> None:
    reply = (
        "The race officer will be Helen Park [1]. "
        "The next committee meeting is on the 8th of July [1]."
    )
    [cited] = pinpoint(reply, [meeting_citation()])
    assert cited.location == (
        "00:00:19.500–00:00:31.000, 00:01:25.500–00:01:36.000 (Tom Reid, Maria Lopez)"
    )
    assert (cited.start_ts, cited.end_ts) == ("00:00:19.500", "00:01:36.000")
