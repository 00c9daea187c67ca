from __future__ import annotations

import itertools
import random
import re

import pytest

from ragchat.ingest.chunking import Chunker
from ragchat.ingest.text_utils import collapse_ws
from ragchat.settings import ChunkingSettings
from ragchat.types import Chunk, LoadedDocument, Section, TimedSpan

WORDS = [
    *("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta"),
    *("kappa", "lambda", "sigma", "omega", "river", "stone"),
]
SETTINGS = ChunkingSettings(child_size=300, child_overlap=100, parent_size=900)


def prose(seed: int, sentences: int) -> str:
    """Sentences of 5–12 words, so each is shorter than the overlap."""
    rng = random.Random(seed)
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 12))]
        out.append(words[0].capitalize() + " " + " ".join(words[1:]) + rng.choice(".!?"))
    return " ".join(out)


def pdf_doc(pages: int = 3, sentences: int = 30) -> LoadedDocument:
    sections = tuple(
        Section(text=prose(n, sentences), locator=f"p{n}", metadata={"page": n})
        for n in range(1, pages + 1)
    )
    return LoadedDocument(
        doc_id="abc123",
        source="docs/report.pdf",
        kind="pdf",
        title="Report",
        sections=sections,
        metadata={"title": "Report", "pages": pages},
    )


def children(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if not c.is_parent]


def parents(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.is_parent]


def offsets(chunks: list[Chunk], text: str) -> list[tuple[int, int]]:
    """Where each child sits in its section text, searching forward like a reader would."""
    found, pos = [], 0
    for chunk in chunks:
        start = text.find(chunk.text, pos)
        assert start >= 0, chunk.text
        found.append((start, start + len(chunk.text)))
        pos = start + 1
    return found


def test_same_input_gives_identical_chunks() -> None:
    doc = pdf_doc()
    first = Chunker(SETTINGS).chunk(doc)
    second = Chunker(SETTINGS.model_copy()).chunk(doc)
    assert first == second
    assert len({c.chunk_id for c in first}) == len(first)


@pytest.mark.parametrize(("size", "overlap"), [(300, 100), (120, 30), (80, 0), (50, 200)])
def test_children_never_exceed_child_size(size: int, overlap: int) -> None:
    settings = ChunkingSettings(child_size=size, child_overlap=overlap, parent_size=400)
    kids = children(Chunker(settings).chunk(pdf_doc()))
    assert len(kids) > 3
    assert max(len(c.text) for c in kids) <= size


def test_a_word_longer_than_the_window_is_cut_and_nothing_is_lost() -> None:
    word = "x" * 130
    doc = LoadedDocument("d", "w.txt", "text", "w", (Section(f"Short start. {word} end.", "s0"),))
    settings = ChunkingSettings(child_size=50, child_overlap=0, parent_size=500)
    kids = children(Chunker(settings).chunk(doc))
    assert all(len(c.text) <= 50 for c in kids)
    assert "".join(c.text for c in kids).count("x") == 130
    assert kids[0].text == "Short start."


def test_children_break_at_sentence_ends_and_restart_at_sentence_starts() -> None:
    doc = pdf_doc(pages=1, sentences=60)
    kids = children(Chunker(SETTINGS).chunk(doc))
    assert len(kids) > 5
    for kid in kids[:-1]:
        assert kid.text[-1] in ".!?", kid.text
    for kid in kids:
        assert kid.text[0].isupper(), kid.text


def test_breaks_fall_back_to_newline_then_space_never_mid_word() -> None:
    lines = "\n".join(" ".join(WORDS[(i + j) % len(WORDS)] for j in range(6)) for i in range(40))
    doc = LoadedDocument("d", "n.txt", "text", "n", (Section(lines, "s0"),))
    kids = children(Chunker(ChunkingSettings(child_size=100, child_overlap=20)).chunk(doc))
    vocabulary = set(WORDS)
    for kid in kids:
        assert set(kid.text.split()) <= vocabulary, kid.text
    # Lines are ~40 chars, so every window can end at a newline rather than at a space.
    text = doc.sections[0].text
    for _, end in offsets(kids, text)[:-1]:
        assert text[end] == "\n"


def test_consecutive_children_overlap_by_at_most_child_overlap() -> None:
    doc = pdf_doc(pages=1, sentences=60)
    kids = children(Chunker(SETTINGS).chunk(doc))
    spans = offsets(kids, doc.sections[0].text)
    for (_, prev_end), (start, _) in itertools.pairwise(spans):
        assert start < prev_end  # overlap present
        assert prev_end - start <= SETTINGS.child_overlap


def test_no_overlap_when_disabled() -> None:
    doc = pdf_doc(pages=1, sentences=60)
    settings = ChunkingSettings(child_size=300, child_overlap=0, parent_size=900)
    spans = offsets(children(Chunker(settings).chunk(doc)), doc.sections[0].text)
    assert all(start >= prev_end for (_, prev_end), (start, _) in itertools.pairwise(spans))


def test_children_and_parents_never_cross_pages() -> None:
    doc = pdf_doc()
    chunks = Chunker(SETTINGS).chunk(doc)
    by_page = {s.metadata["page"]: s.text for s in doc.sections}
    for chunk in chunks:
        page = chunk.metadata["page"]
        assert chunk.text in by_page[page]
        assert f"_p{page}_" in chunk.chunk_id


def test_every_child_has_a_parent_that_contains_it() -> None:
    doc = pdf_doc(sentences=80)
    chunks = Chunker(SETTINGS).chunk(doc)
    parent_by_id = {c.chunk_id: c for c in parents(chunks)}
    assert len(parent_by_id) > 3
    for kid in children(chunks):
        assert kid.parent_id in parent_by_id
        assert collapse_ws(kid.text) in collapse_ws(parent_by_id[kid.parent_id].text)
    for parent in parent_by_id.values():
        assert len(parent.text) <= SETTINGS.parent_size
        assert parent.parent_id is None
        assert parent.text in doc.sections[parent.metadata["page"] - 1].text


def test_parent_text_has_no_duplicated_overlap() -> None:
    doc = pdf_doc(pages=1, sentences=12)
    chunks = Chunker(SETTINGS).chunk(doc)
    [parent] = parents(chunks)
    assert len(children(chunks)) > 1
    assert parent.text == doc.sections[0].text


def test_ids_positions_and_order() -> None:
    doc = pdf_doc()
    chunks = Chunker(SETTINGS).chunk(doc)
    kids, pars = children(chunks), parents(chunks)
    assert [c.position for c in kids] == list(range(len(kids)))
    assert [c.position for c in pars] == list(range(len(pars)))
    for i, kid in enumerate(kids):
        assert re.fullmatch(rf"abc123_p{kid.metadata['page']}_c{i}", kid.chunk_id)
    for j, parent in enumerate(pars):
        assert re.fullmatch(rf"abc123_p{parent.metadata['page']}_P{j}", parent.chunk_id)
    # Each parent comes first, then its children.
    current = None
    for chunk in chunks:
        if chunk.is_parent:
            current = chunk.chunk_id
        else:
            assert chunk.parent_id == current


def test_every_chunk_carries_document_and_section_metadata() -> None:
    doc = pdf_doc()
    for chunk in Chunker(SETTINGS).chunk(doc):
        md = chunk.metadata
        assert md["source"] == "docs/report.pdf"
        assert md["kind"] == "pdf"
        assert md["doc_title"] == "Report"
        assert md["pages"] == 3
        assert chunk.location() == f"page {md['page']}"


def test_markdown_sections_are_not_crossed_and_keep_heading_path() -> None:
    sections = tuple(
        Section(
            text=f"## H{i}\n\n" + prose(10 + i, 8),
            locator=f"s{i}",
            metadata={"heading_path": ["Top", f"H{i}"], "section_id": f"s{i}", "heading": f"H{i}"},
        )
        for i in range(4)
    )
    doc = LoadedDocument("md1", "g.md", "markdown", "G", sections, {"title": "G", "chapter": 2})
    chunks = Chunker(SETTINGS).chunk(doc)
    for chunk in chunks:
        index = int(chunk.metadata["section_id"][1:])
        assert chunk.text in sections[index].text
        assert chunk.chunk_id.startswith(f"md1_s{index}_")
        assert chunk.metadata["heading_path"] == ["Top", f"H{index}"]
        assert chunk.metadata["chapter"] == 2


def test_short_record_gives_one_child_and_one_identical_parent() -> None:
    doc = LoadedDocument(
        "r1", "c.jsonl#7", "jsonl", "Title", (Section("Title\nShort   body.", "r0"),), {}
    )
    chunks = Chunker(SETTINGS).chunk(doc)
    assert [(c.chunk_id, c.is_parent, c.text) for c in chunks] == [
        ("r1_r0_P0", True, "Title\nShort body."),
        ("r1_r0_c0", False, "Title\nShort body."),
    ]
    assert chunks[1].parent_id == "r1_r0_P0"


def test_document_without_sections_gives_no_chunks() -> None:
    doc = LoadedDocument("e", "e.pdf", "pdf", "e", ())
    assert Chunker(SETTINGS).chunk(doc) == []


def transcript(turns: int, words_per_turn: int) -> LoadedDocument:
    sections = []
    for t in range(turns):
        speaker = "Alice" if t % 2 == 0 else "Bob"
        text = f"{speaker}: " + " ".join(WORDS[(t + i) % len(WORDS)] for i in range(words_per_turn))
        start = 10.0 * t
        sections.append(
            Section(
                text=text,
                locator=f"t{t}",
                metadata={"start": start, "end": start + 10, "speakers": [speaker]},
                spans=(TimedSpan(0, len(text), start, start + 10, speaker),),
            )
        )
    return LoadedDocument("v1", "m.vtt", "vtt", "M", tuple(sections), {"title": "M"})


def test_transcript_parents_group_whole_turns_up_to_parent_size() -> None:
    doc = transcript(turns=20, words_per_turn=4)
    settings = ChunkingSettings(child_size=100, child_overlap=0, parent_size=200)
    chunks = Chunker(settings).chunk(doc)
    pars = parents(chunks)
    assert len(pars) > 1
    turn_texts = [s.text for s in doc.sections]
    for parent in pars:
        assert len(parent.text) <= 200
        lines = parent.text.split("\n")
        assert all(line in turn_texts for line in lines)  # whole turns, never half of one
        first_turn = turn_texts.index(lines[0])
        assert parent.chunk_id.startswith(f"v1_t{first_turn}_P")
        assert parent.metadata["start"] == 10.0 * first_turn
        assert parent.metadata["end"] == 10.0 * (first_turn + len(lines))
    kids = children(chunks)
    assert all(k.metadata["speakers"] for k in kids)
    assert any(k.metadata["speakers"] == ["Alice", "Bob"] for k in kids)


def test_corpus_records_stay_whole_up_to_record_size() -> None:
    text = " ".join(f"Sentence number {i} about vitamin D." for i in range(60))
    doc = LoadedDocument("r" * 64, "c.jsonl#1", "jsonl", "T", (Section(text, "r0"),))
    children = [c for c in Chunker(ChunkingSettings(child_size=300)).chunk(doc) if not c.is_parent]
    assert len(text) > 300 and len(children) == 1
    small = ChunkingSettings(child_size=300, record_size=500)
    assert len([c for c in Chunker(small).chunk(doc) if not c.is_parent]) > 1


def test_transcript_chunks_list_their_cues_as_offsets_into_their_own_text() -> None:
    doc = transcript(turns=12, words_per_turn=6)
    settings = ChunkingSettings(child_size=90, child_overlap=20, parent_size=300)
    chunks = Chunker(settings).chunk(doc)
    turns = {s.metadata["start"]: s.text for s in doc.sections}
    for chunk in chunks:
        cues = chunk.metadata["cues"]
        assert cues and cues[0][2] == chunk.metadata["start"]
        assert max(c[3] for c in cues) == chunk.metadata["end"]
        for a, b, start, _end, speaker in cues:
            said = chunk.text[a:b]
            assert said and said in turns[start]  # the words of that caption
            assert speaker == ("Alice" if start % 20 == 0 else "Bob")
