"""The page's Markdown renderer (static/js/markdown.js), run in the browser: formatting, and
hostile input that must stay text (no script runs, no image loads, no javascript: link)."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import UI

pytestmark = pytest.mark.integration

RENDER = """async ([source, citations]) => {
  const md = await import('/static/js/markdown.js');
  const box = document.createElement('div');
  box.id = 'md-test';
  box.append(md.renderMarkdown(source, {citations, onCite: () => { window.citeClicked = true; }}));
  document.body.append(box);
  await new Promise((r) => setTimeout(r, 50));  // let any injected handler fire
  const out = {
    html: box.innerHTML,
    text: box.textContent,
    tags: [...box.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()),
    links: [...box.querySelectorAll('a')].map((a) => ({
      href: a.getAttribute('href'), rel: a.rel, target: a.target, text: a.textContent})),
    handlers: [...box.querySelectorAll('*')].flatMap((e) =>
      [...e.attributes].map((a) => a.name).filter((n) => n.startsWith('on') || n === 'style')),
    pwned: window.pwned === undefined ? null : String(window.pwned),
  };
  box.remove();
  return out;
}"""


TEXT_TAGS = {"p", "br", "code", "pre", "strong", "em", "del", "ul", "ol", "li", "blockquote"}


def render(ui: UI, source: str, citations: list[dict[str, Any]] | None = None) -> Any:
    return ui.page.evaluate(RENDER, [source, citations or []])


def test_formatting(ui: UI) -> None:
    out = render(
        ui,
        "# Title\n\nSome **bold**, *italic*, `a < b` and ~~old~~ text.\n"
        "Second line.\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n"
        "> quoted\n\n```python\nif a < b:\n    print('<ok>')\n```\n\n---\n"
        "A [link](https://example.org/a?b=1) and <https://example.org/auto> and "
        "https://example.org/bare. snake_case_name stays.",
    )
    tags = out["tags"]
    for tag in ("h3", "strong", "em", "code", "del", "ul", "ol", "li", "blockquote", "pre", "hr"):
        assert tag in tags, (tag, out["html"])
    assert "br" in tags  # a single newline is a line break
    assert tags.count("ul") == 2  # the nested list
    assert "if a < b:\n    print('<ok>')" in out["text"]
    assert "snake_case_name" in out["text"] and tags.count("em") == 1
    hrefs = [link["href"] for link in out["links"]]
    assert hrefs == [
        "https://example.org/a?b=1",
        "https://example.org/auto",
        "https://example.org/bare",
    ]
    for link in out["links"]:
        assert link["rel"] == "noopener noreferrer" and link["target"] == "_blank"


def test_citation_markers_become_buttons_for_known_sources(ui: UI) -> None:
    out = render(ui, "Fact [1]. Other [2, 3].", [{"index": 1, "title": "Doc"}])
    assert out["tags"].count("button") == 1
    assert "[2]" in out["text"] and "[3]" in out["text"]


@pytest.mark.parametrize(
    "source",
    [
        '<img src=x onerror="window.pwned=1">',
        "<script>window.pwned=2</script>",
        '<svg onload="window.pwned=3"></svg>',
        "**<img src=x onerror=window.pwned=4>**",
        '<a href="javascript:window.pwned=5">click</a>',
        "&lt;img src=x onerror=window.pwned=6&gt;",
        '<iframe src="javascript:window.pwned=7"></iframe>',
        "`<script>window.pwned=8</script>`",
        "```\n</code></pre><img src=x onerror=window.pwned=9>\n```",
    ],
)
def test_markup_in_the_text_stays_text(ui: UI, source: str) -> None:
    out = render(ui, source)
    assert out["pwned"] is None
    assert out["handlers"] == []
    assert not {"img", "script", "svg", "iframe", "a"} & set(out["tags"])
    assert "pwned" in out["text"]  # shown, as text
    assert set(out["tags"]) <= TEXT_TAGS, out["html"]


@pytest.mark.parametrize(
    "url",
    [
        "javascript:window.pwned=1",
        "JaVaScRiPt:window.pwned=1",
        "java\tscript:window.pwned=1",
        " javascript:window.pwned=1",
        "data:text/html,<script>window.pwned=1</script>",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "/relative/path",
        "&#106;avascript:window.pwned=1",
    ],
)
def test_unsafe_link_targets_are_dropped(ui: UI, url: str) -> None:
    out = render(ui, f"[click me]({url}) and ![pic]({url})")
    assert out["links"] == []
    assert "click me" in out["text"]
    assert "img" not in out["tags"]
    assert out["pwned"] is None


def test_images_are_never_loaded(ui: UI) -> None:
    requests: list[str] = []
    ui.page.on("request", lambda r: requests.append(r.url))
    out = render(ui, "![a cat](https://example.org/cat.png)")
    assert "img" not in out["tags"]
    assert out["links"][0]["href"] == "https://example.org/cat.png"
    assert "a cat" in out["text"]
    assert not [u for u in requests if "example.org" in u]


def test_pathological_input_renders_quickly(ui: UI) -> None:
    source = ("*" * 2000) + ("_a" * 2000) + ("[" * 500) + ("> " * 200) + "x" + ("`" * 300)
    took = ui.page.evaluate(
        """async (s) => {
          const md = await import('/static/js/markdown.js');
          const t = performance.now();
          md.renderMarkdown(s);
          return performance.now() - t;
        }""",
        source,
    )
    assert took < 2000
