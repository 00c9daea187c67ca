"""HTML loader (a saved web page) on lxml: the page's content with its heading path, without
the navigation, banners, footers, sidebars and scripts around it.

lxml rather than trafilatura or BeautifulSoup: trafilatura's output drops the heading levels a
citation needs, and BeautifulSoup over lxml takes seconds (not milliseconds) on a page of
deeply nested tags. libxml2 stops at 256 levels of nesting; such a page is refused with that
reason instead of being read in part. EPUB chapters (``ingest.epub``) reuse ``walk``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragchat.errors import IngestError
from ragchat.ingest.structure import Outline
from ragchat.ingest.tables import cell_text
from ragchat.ingest.text_utils import read_bytes, sha256_hex
from ragchat.types import LoadedDocument

MAX_DEPTH = 256  # libxml2's own limit without XML_PARSE_HUGE

_SKIP = {
    *("script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object"),
    *("nav", "footer", "aside", "form", "button", "select", "textarea", "head", "dialog"),
}
_BOILERPLATE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu"}
_BLOCK = {
    *("p", "div", "section", "article", "main", "header", "blockquote", "li", "ul", "ol", "dl"),
    *("dt", "dd", "figure", "figcaption", "br", "hr", "address", "details", "summary", "body"),
    *("tr", "td", "th", "caption", "center", "html"),
}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def parse_html(data: bytes, source: str) -> Any:
    """The document's root element; refuses a page nested deeper than libxml2 reads."""
    import lxml.html  # imported when a page is read, not with the registry
    from lxml import etree

    try:
        data.decode("utf-8")
        parser = lxml.html.HTMLParser(encoding="utf-8")
    except UnicodeDecodeError:  # not UTF-8: the page's own <meta charset> decides
        parser = lxml.html.HTMLParser()
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise IngestError(source, f"not a readable HTML page ({exc})") from exc
    for error in parser.error_log:
        if error.type_name == "ERR_RESOURCE_LIMIT" or "Excessive depth" in error.message:
            raise IngestError(
                source, f"HTML nested deeper than {MAX_DEPTH} elements (a crafted page?)"
            )
    return root


def _hidden(el: Any) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    if (el.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    style = (el.get("style") or "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _tag(el: Any) -> str:
    return el.tag.lower() if isinstance(el.tag, str) else ""


def _table_rows(table: Any) -> list[list[str]]:
    """Rows of this table, not of tables nested in its cells (their text stays in the cell)."""
    rows = []
    for tr in table.iter("tr"):
        if next(tr.iterancestors("table"), None) is not table:
            continue
        cells = [cell_text(td.text_content()) for td in tr if _tag(td) in ("td", "th")]
        if any(cells):
            rows.append(cells)
    return rows


def content_root(root: Any) -> Any:
    """``<main>``, else the ``<article>`` with the most text, else ``<body>``."""
    main = root.find(".//main")
    if main is not None:
        return main
    articles = root.findall(".//article")
    if articles:
        return max(articles, key=lambda a: len(a.text_content()))
    body = root.find(".//body")
    return body if body is not None else root


def walk(start: Any, outline: Outline) -> None:
    """Feeds ``outline`` the headings, lines and tables under ``start``, in reading order."""
    line: list[str] = []

    def flush() -> None:
        if line:
            outline.line(" ".join("".join(line).split()))
            line.clear()

    stack: list[tuple[Any, bool]] = [(start, False)]
    while stack:
        el, closing = stack.pop()
        tag = _tag(el)
        if closing:
            if tag in _BLOCK:
                flush()
            if el.tail and el is not start:
                line.append(el.tail)
            continue
        if not tag or tag in _SKIP or _hidden(el):
            if el.tail and el is not start:
                line.append(el.tail)
            continue
        if tag in _HEADINGS:
            flush()
            outline.heading(_HEADINGS[tag], el.text_content())
        elif tag == "table":
            flush()
            rows = _table_rows(el)
            if rows:
                outline.table(rows[0], rows[1:])
        elif tag == "pre":
            flush()
            for text in el.text_content().splitlines():
                outline.line(text)
        else:
            if tag in _BLOCK:
                flush()
            if tag == "li":
                line.append("- ")
            if el.text:
                line.append(el.text)
            stack.append((el, True))
            stack.extend((child, False) for child in reversed(el))
            continue
        if el.tail and el is not start:
            line.append(el.tail)
    flush()


def page_title(root: Any) -> str:
    for path in (".//head/title", ".//title"):
        el = root.find(path)
        if el is not None and el.text_content().strip():
            return " ".join(el.text_content().split())
    meta = root.find(".//meta[@property='og:title']")
    return " ".join((meta.get("content") or "").split()) if meta is not None else ""


class HtmlLoader:
    suffixes: tuple[str, ...] = (".html", ".htm", ".xhtml")

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        source = str(path)
        data = read_bytes(path)
        if not data.strip():
            raise IngestError(source, "empty file, not an HTML page")
        root = parse_html(data, source)
        outline = Outline(source, max_chars=self.max_chars)
        walk(content_root(root), outline)
        sections = outline.finish()
        title = page_title(root) or outline.first_heading or path.stem
        return [
            LoadedDocument(
                doc_id=sha256_hex(data),
                source=source,
                kind="html",
                title=title,
                sections=tuple(sections),
                metadata={"title": title},
                warnings=() if sections else ("no text in the page",),
            )
        ]
