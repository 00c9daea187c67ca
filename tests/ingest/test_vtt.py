from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.errors import IngestError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.vtt import VttLoader
from ragchat.settings import ChunkingSettings

MEETING = """WEBVTT

NOTE title: Budget review

00:00:01.000 --> 00:00:04.500
<v Alice>Hello everyone, welcome.</v>

00:00:04.500 --> 00:00:07.250
<v Alice>Today we discuss the budget.

00:00:07.250 --> 00:00:10.000
Bob: Thanks Alice. I have <b>numbers</b> &amp; charts.

00:00:10.000 --> 00:00:12.120
They look good.

00:01:02.000 --> 00:01:05.005
<v.loud Carol Ann>Great work!
"""


def ts(seconds: int) -> str:
    return f"00:{seconds // 60:02d}:{seconds % 60:02d}.000"


def write(tmp_path: Path, text: str, name: str = "meeting.vtt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_speakers_from_voice_spans_and_name_prefixes(tmp_path: Path) -> None:
    [doc] = VttLoader().load(write(tmp_path, MEETING))
    assert doc.kind == "vtt"
    assert doc.title == "Budget review"
    assert [s.text for s in doc.sections] == [
        "Alice: Hello everyone, welcome. Today we discuss the budget.",
        "Bob: Thanks Alice. I have numbers & charts. They look good.",
        "Carol Ann: Great work!",
    ]
    assert [s.locator for s in doc.sections] == ["t0", "t1", "t2"]
    assert [s.metadata["speakers"] for s in doc.sections] == [["Alice"], ["Bob"], ["Carol Ann"]]


def test_turn_metadata_has_exact_times(tmp_path: Path) -> None:
    [doc] = VttLoader().load(write(tmp_path, MEETING))
    first, second, third = (s.metadata for s in doc.sections)
    assert (first["start"], first["end"]) == (1.0, 7.25)
    assert (second["start_ts"], second["end_ts"]) == ("00:00:07.250", "00:00:12.120")
    assert (third["start_ts"], third["end_ts"]) == ("00:01:02.000", "00:01:05.005")


def test_spans_point_at_each_caption_text(tmp_path: Path) -> None:
    [doc] = VttLoader().load(write(tmp_path, MEETING))
    bob = doc.sections[1]
    texts = [bob.text[s.start_char : s.end_char] for s in bob.spans]
    assert texts == ["Bob: Thanks Alice. I have numbers & charts.", "They look good."]
    assert [(s.start, s.end, s.speaker) for s in bob.spans] == [
        (7.25, 10.0, "Bob"),
        (10.0, 12.12, "Bob"),
    ]


def test_consecutive_captions_of_one_speaker_merge_and_changes_split(tmp_path: Path) -> None:
    text = """WEBVTT

00:00:00.000 --> 00:00:02.000
Alice: one

00:00:02.000 --> 00:00:04.000
Alice: two

00:00:04.000 --> 00:00:06.000
Bob: three

00:00:06.000 --> 00:00:08.000
Alice: four
"""
    [doc] = VttLoader().load(write(tmp_path, text))
    assert [s.text for s in doc.sections] == ["Alice: one two", "Bob: three", "Alice: four"]


def test_unlabelled_captions_have_no_speaker_prefix(tmp_path: Path) -> None:
    text = "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\njust words\n"
    [doc] = VttLoader().load(write(tmp_path, text, "lecture.vtt"))
    assert doc.title == "lecture"
    assert [s.text for s in doc.sections] == ["just words"]
    assert doc.sections[0].metadata["speakers"] == []


def test_chunks_know_their_time_range_when_a_turn_is_cut(tmp_path: Path) -> None:
    [doc] = VttLoader().load(write(tmp_path, MEETING))
    settings = ChunkingSettings(child_size=50, child_overlap=0, parent_size=200)
    children = [c for c in Chunker(settings).chunk(doc) if not c.is_parent]
    got = [
        (c.text, c.metadata["start_ts"], c.metadata["end_ts"], c.metadata["speakers"])
        for c in children
    ]
    assert got == [
        ("Alice: Hello everyone, welcome.", "00:00:01.000", "00:00:04.500", ["Alice"]),
        (
            "Today we discuss the budget.\nBob: Thanks Alice.",
            "00:00:04.500",
            "00:00:10.000",
            ["Alice", "Bob"],
        ),
        ("I have numbers & charts. They look good.", "00:00:07.250", "00:00:12.120", ["Bob"]),
        ("Carol Ann: Great work!", "00:01:02.000", "00:01:05.005", ["Carol Ann"]),
    ]
    # A child starting mid-turn is still located at the turn it starts in.
    assert [c.chunk_id.split("_")[1] for c in children] == ["t0", "t0", "t1", "t2"]


def test_children_respect_vtt_child_seconds(tmp_path: Path) -> None:
    cues = "".join(
        f"{ts(10 * i)} --> {ts(10 * i + 10)}\nSentence number {i} here.\n\n" for i in range(6)
    )
    [doc] = VttLoader().load(write(tmp_path, "WEBVTT\n\n" + cues))
    settings = ChunkingSettings(child_size=1000, child_overlap=0, vtt_child_seconds=25)
    children = [c for c in Chunker(settings).chunk(doc) if not c.is_parent]
    assert [(c.metadata["start"], c.metadata["end"]) for c in children] == [
        (0.0, 20.0),
        (20.0, 40.0),
        (40.0, 60.0),
    ]
    assert children[0].text == "Sentence number 0 here. Sentence number 1 here."


def test_no_cues_raises(tmp_path: Path) -> None:
    path = write(tmp_path, "WEBVTT\n\nNOTE nothing here\n")
    with pytest.raises(IngestError, match="no cues") as info:
        VttLoader().load(path)
    assert info.value.source == str(path)


@pytest.mark.parametrize(
    "text",
    [
        "not a vtt file\n\n00:00:00.000 --> 00:00:01.000\nhi\n",
        "WEBVTT\n\n00:00:00.000 --> 00:00:99.000\nbad seconds\n",
        "WEBVTT\n\n00:00:00.000 -> 00:00:01.000\nbad arrow\n",
    ],
)
def test_malformed_vtt_raises_naming_the_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text, "broken.vtt")
    with pytest.raises(IngestError) as info:
        VttLoader().load(path)
    assert info.value.source == str(path)


def test_malformed_cues_among_good_ones_are_skipped_with_a_warning(tmp_path: Path) -> None:
    text = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nkept\n\n00:00:03.000 --> 00:00:99.000\ndropped\n"
    )
    [doc] = VttLoader().load(write(tmp_path, text))
    assert [s.text for s in doc.sections] == ["kept"]
    assert doc.warnings == ("1 malformed cue(s) skipped",)
