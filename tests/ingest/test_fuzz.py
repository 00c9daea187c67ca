"""Property tests: whatever bytes arrive as a transcript, a Markdown file, a text file or a
JSONL corpus, the loader returns located sections or raises ``IngestError`` (the documented,
per-file error an upload job reports); chunking what it returns keeps every chunk non-empty,
inside its document and deterministic. Anything else would fail a whole multi-file upload."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragchat.errors import IngestError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.registry import loader_for
from ragchat.settings import ChunkingSettings

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
CHUNKER = Chunker(ChunkingSettings(child_size=120, child_overlap=20, parent_size=400))

# Pieces that steer generated text towards each format's edge cases.
VTT_PIECES = st.sampled_from(
    [
        "WEBVTT\n\n",
        "00:00:01.000 --> 00:00:04.000\n",
        "00:00:04.000 --> 00:00:02.000\n",  # backwards
        "99:99:99.999 --> 00:00:01.000\n",
        "<v Dr. Okafor>",
        "</v>",
        "NOTE a note\n",
        "STYLE\n::cue {}\n",
        "1\n",
        "\n",
        "Many toddlers sleep eleven hours at night.\n",
        "-->",
        "\x00",
        "\ufeff",
    ]
)
MD_PIECES = st.sampled_from(
    [
        "---\n",
        "title: Notes\n",
        "title: [unclosed\n",
        "# Heading\n",
        "## Sub heading\n",
        "####### too deep\n",
        "```\ncode\n",
        "- item\n",
        "A sentence that wraps at a fine of up to\n",
        "300 pounds.\n",
        "\n",
        "<script>alert(1)</script>",
        "\x00",
        "\r\n",
    ]
)
JSONL_PIECES = st.sampled_from(
    [
        '{"_id": "1", "title": "T", "text": "A passage."}\n',
        '{"_id": 2, "text": ""}\n',
        '{"id": "x", "contents": "Other field names."}\n',
        "[1, 2, 3]\n",
        '{"_id": "1", "text": "duplicate id"}\n',
        "not json\n",
        "{\n",
        "\n",
        '"just a string"\n',
        "[" * 50 + "]" * 50 + "\n",
    ]
)


def document_text(pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(pieces, st.text(max_size=40)), max_size=30).map("".join)


def _load_and_chunk(suffix: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzzed{suffix}"
        path.write_bytes(data)
        try:
            docs = loader_for(path).load(path)
        except IngestError as exc:
            assert exc.reason  # a reason the job can show
            return
        for doc in docs:
            chunks = CHUNKER.chunk(doc)
            again = CHUNKER.chunk(doc)
            assert [c.chunk_id for c in chunks] == [c.chunk_id for c in again]
            assert len({c.chunk_id for c in chunks}) == len(chunks)
            for chunk in chunks:
                assert chunk.doc_id == doc.doc_id and chunk.text.strip()


@FUZZ
@given(document_text(VTT_PIECES))
def test_transcripts(text: str) -> None:
    _load_and_chunk(".vtt", text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(document_text(MD_PIECES))
def test_markdown(text: str) -> None:
    _load_and_chunk(".md", text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(st.binary(max_size=400))
def test_text_files_of_any_bytes(data: bytes) -> None:
    _load_and_chunk(".txt", data)


@FUZZ
@given(document_text(JSONL_PIECES))
def test_jsonl_corpora(text: str) -> None:
    _load_and_chunk(".jsonl", text.encode("utf-8", "surrogatepass"))
