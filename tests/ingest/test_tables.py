from __future__ import annotations

from pathlib import Path

from ragchat.ingest.chunking import Chunker
from ragchat.ingest.markdown import MarkdownLoader, split_tables
from ragchat.ingest.tables import row_sentence, table_lines, table_section
from ragchat.settings import ChunkingSettings
from ragchat.types import Chunk, LoadedDocument

SETTINGS = ChunkingSettings(child_size=200, child_overlap=60, parent_size=600)


def test_a_row_names_every_non_empty_cell() -> None:
    names = ["Drug", "Adult dose", "Child dose"]
    assert row_sentence(names, ["Ibuprofen", "400 mg", "10 mg/kg"]) == (
        "Drug: Ibuprofen; Adult dose: 400 mg; Child dose: 10 mg/kg."
    )
    assert row_sentence(names, ["Aspirin", "", "none under 16"]) == (
        "Drug: Aspirin; Child dose: none under 16."
    )
    assert row_sentence(names, ["", None, " "]) == ""


def test_cells_become_one_line_and_sentences_end_once() -> None:
    assert (
        row_sentence(["Step", "Note"], [1.0, "Take with\nfood."])
        == "Step: 1; Note: Take with food."
    )


def test_blank_and_missing_headers_are_numbered() -> None:
    lines, index = table_lines(["Name", ""], [["a", "b", "c"], [], ["d"]])
    assert lines == ["Name: a; Column 2: b; Column 3: c.", "Name: d."]
    assert index == [0, 2]


def test_table_section_keeps_row_numbers_of_non_empty_rows() -> None:
    section = table_section(
        ["k", "v"], [["a", 1], [None, None], ["b", 2]], locator="t0", metadata={}, numbers=[2, 3, 4]
    )
    assert section is not None and section.table
    assert section.text == "k: a; v: 1.\nk: b; v: 2."
    assert section.row_numbers == (2, 4)
    assert table_section(["k"], [[None]], locator="t1", metadata={}) is None


PRICES = """# Price list

Prices valid from May.

## Tablets

| Product | Price | Notes |
|---|--:|---|
| **Ibuprofen** 200 | 3.50 | with food |
| Paracetamol | 2.10 | |
| Pipe \\| test | `1.5` | x |

After the table.

```
| not | a table |
|-----|---------|
| in  | code    |
```
"""


def test_markdown_tables_become_row_sections_under_their_heading(tmp_path: Path) -> None:
    path = tmp_path / "prices.md"
    path.write_text(PRICES, encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    tables = [s for s in doc.sections if s.table]
    [table] = tables
    assert table.text.split("\n") == [
        "Product: Ibuprofen 200; Price: 3.50; Notes: with food.",
        "Product: Paracetamol; Price: 2.10.",
        "Product: Pipe | test; Price: 1.5; Notes: x.",
    ]
    assert table.metadata["heading_path"] == ["Price list", "Tablets"]
    rest = [s.text for s in doc.sections if not s.table]
    # The heading alone before its table is not a section; the prose after it and the code
    # block (whose pipes are not a table) are.
    assert rest[0].startswith("# Price list")
    assert rest[1].startswith("After the table.") and "| not | a table |" in rest[1]
    assert len({s.locator for s in doc.sections}) == len(doc.sections)


def test_split_tables_leaves_text_without_tables_alone() -> None:
    body = "a | b\nno delimiter row here"
    assert split_tables(body) == [body]


def _table_doc(rows: int, cell: str = "value") -> LoadedDocument:
    header = ["Key", "Alpha column", "Beta column", "Gamma column"]
    body = [[f"row{i}", f"{cell} a{i}. Next", f"{cell} b{i}", f"{cell} c{i}"] for i in range(rows)]
    section = table_section(
        header,
        body,
        locator="s0",
        metadata={"sheet": "Prices"},
        numbers=list(range(2, rows + 2)),
    )
    assert section is not None
    return LoadedDocument(
        doc_id="d", source="t.xlsx", kind="spreadsheet", title="t", sections=(section,)
    )


def _children(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if not c.is_parent]


def test_the_chunker_never_splits_a_row_and_repeats_no_row() -> None:
    doc = _table_doc(60)
    rows = doc.sections[0].text.split("\n")
    kids = _children(Chunker(SETTINGS).chunk(doc))
    assert len(kids) > 5
    seen: list[str] = []
    for chunk in kids:
        lines = chunk.text.split("\n")
        assert all(line in rows for line in lines), lines
        assert len(chunk.text) <= SETTINGS.child_size
        assert chunk.metadata["table"] is True
        first, last = chunk.metadata["rows"]
        assert rows.index(lines[0]) + 2 == first and rows.index(lines[-1]) + 2 == last
        seen.extend(lines)
    assert seen == rows
    assert kids[0].location().startswith("Prices, rows 2–")


def test_a_row_longer_than_a_child_is_one_chunk_and_one_longer_than_a_parent_is_cut() -> None:
    long_row = _table_doc(3, cell="word " * 20)
    kids = _children(Chunker(SETTINGS).chunk(long_row))
    rows = long_row.sections[0].text.split("\n")
    assert [k.text for k in kids] == rows
    huge = _table_doc(1, cell="word " * 200)
    kids = _children(Chunker(SETTINGS).chunk(huge))
    assert len(kids) > 1
    assert all(k.metadata["rows"] == [2, 2] for k in kids)
    assert kids[0].location() == "Prices, row 2"
