from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ragchat.errors import IngestError
from ragchat.ingest.markdown import MarkdownLoader

GUIDE = """---
title: Operator Guide
chapter: 3
chapter_title: Installing
published: 2024-05-01
tags: [setup, linux]
---
Read this first.

# Install

Run the installer.

```bash
# not a heading, just a shell comment
echo done
```

## Linux

Use apt.

### Debian ###

Use dpkg.

## macOS

~~~~
# still code
~~~
## still code too
~~~~

Use brew.

# Usage

Start it.
"""


def test_sections_follow_headings_with_full_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    assert doc.doc_id == hashlib.sha256(GUIDE.encode()).hexdigest()
    assert [(s.locator, s.metadata["heading_path"]) for s in doc.sections] == [
        ("s0", []),
        ("s1", ["Install"]),
        ("s2", ["Install", "Linux"]),
        ("s3", ["Install", "Linux", "Debian"]),
        ("s4", ["Install", "macOS"]),
        ("s5", ["Usage"]),
    ]
    assert [s.metadata["section_id"] for s in doc.sections] == [f"s{i}" for i in range(6)]
    assert [s.metadata["heading"] for s in doc.sections] == [
        "",
        "Install",
        "Linux",
        "Debian",
        "macOS",
        "Usage",
    ]


def test_hashes_inside_code_fences_are_not_headings(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    install, macos = doc.sections[1], doc.sections[4]
    assert "# not a heading, just a shell comment" in install.text
    assert "## still code too" in macos.text
    assert macos.text.endswith("Use brew.")


def test_section_text_starts_with_its_heading_line(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    assert doc.sections[0].text == "Read this first."
    assert doc.sections[2].text == "## Linux\n\nUse apt."
    assert doc.sections[3].text.startswith("### Debian ###")


def test_frontmatter_becomes_metadata(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    assert doc.title == "Operator Guide"
    assert doc.metadata == {
        "title": "Operator Guide",
        "chapter": 3,
        "chapter_title": "Installing",
        "published": "2024-05-01",
        "tags": ["setup", "linux"],
    }
    section = doc.sections[2].metadata
    assert section["chapter"] == 3
    assert section["chapter_title"] == "Installing"
    assert section["published"] == "2024-05-01"
    assert "tags" not in section  # only scalars are copied onto sections


def test_title_from_first_h1_then_file_stem(tmp_path: Path) -> None:
    h1 = tmp_path / "a.md"
    h1.write_text("intro\n\n## Sub first\n\n# Real Title\n\ntext\n", encoding="utf-8")
    assert MarkdownLoader().load(h1)[0].title == "Real Title"
    plain = tmp_path / "release-notes.md"
    plain.write_text("## Only level two\n\ntext\n", encoding="utf-8")
    assert MarkdownLoader().load(plain)[0].title == "release-notes"


def test_empty_preamble_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("\n\n# One\n\nbody\n", encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    assert [(s.locator, s.text) for s in doc.sections] == [("s0", "# One\n\nbody")]


def test_hash_without_space_is_not_a_heading(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("# Top\n\n#hashtag stays text\n", encoding="utf-8")
    [doc] = MarkdownLoader().load(path)
    assert len(doc.sections) == 1
    assert "#hashtag stays text" in doc.sections[0].text


@pytest.mark.parametrize(
    "frontmatter",
    ["---\ntitle: [unclosed\n---\nbody\n", "---\n- just\n- a list\n---\nbody\n"],
)
def test_bad_frontmatter_raises_naming_the_file(tmp_path: Path, frontmatter: str) -> None:
    path = tmp_path / "broken.md"
    path.write_text(frontmatter, encoding="utf-8")
    with pytest.raises(IngestError) as info:
        MarkdownLoader().load(path)
    assert info.value.source == str(path)
    assert "frontmatter" in info.value.reason
