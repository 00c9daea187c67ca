"""The page's files, checked without a browser: served from the package, no inline script or
style (the API's Content-Security-Policy forbids them), no remote assets, no HTML parsing of
strings in the JavaScript, and every ES module import resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ragchat.ui

STATIC = Path(ragchat.ui.__file__).resolve().parent / "static"
JS = [STATIC / "app.js", *sorted((STATIC / "js").glob("*.js"))]
TEXT_FILES = [STATIC / "index.html", STATIC / "app.css", STATIC / "favicon.svg", *JS]


def test_the_api_serves_this_folder() -> None:
    from ragchat.api.routes import ui

    assert Path(ui.STATIC_DIR).resolve() == STATIC
    assert (STATIC / "index.html").is_file()


def test_index_loads_only_external_same_origin_assets() -> None:
    html = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts, "no script tag"
    for attrs, body in scripts:
        assert 'type="module"' in attrs and 'src="/static/' in attrs
        assert not body.strip(), "inline script: blocked by the CSP"
    assert "<style" not in html
    assert not re.search(r"\sstyle\s*=", html), "inline style attribute: blocked by the CSP"
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler: blocked by the CSP"
    for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert ref.startswith(("/static/", "#")), ref
        if ref.startswith("/static/"):
            assert (STATIC / ref.removeprefix("/static/")).is_file(), ref


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: p.name)
def test_no_remote_assets(path: Path) -> None:
    text = path.read_text()
    urls = re.findall(r"https?://[^\s\"'`)]+", text)
    # The SVG namespace is a name, not a fetch.
    assert [u for u in urls if not u.startswith("http://www.w3.org/2000/svg")] == []
    assert "@import" not in text


@pytest.mark.parametrize("path", JS, ids=lambda p: p.name)
def test_javascript_never_parses_strings_as_html(path: Path) -> None:
    code = path.read_text()
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "createContextualFragment",
        "eval(",
        "new Function",
        "DOMParser",
        'setAttribute("style"',
    ):
        assert sink not in code, f"{path.name} uses {sink}"


@pytest.mark.parametrize("path", JS, ids=lambda p: p.name)
def test_module_imports_resolve(path: Path) -> None:
    code = path.read_text()
    for spec in re.findall(r"^import .*? from \"([^\"]+)\";", code, flags=re.M | re.S):
        assert spec.startswith("./"), f"{path.name}: bare or remote import {spec}"
        assert (path.parent / spec).resolve().is_file(), f"{path.name}: missing {spec}"


def test_static_files_ship_with_the_package() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not a source checkout")
    assert '"ui/static/**/*"' in pyproject.read_text()
