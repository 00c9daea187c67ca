"""/docs and /redoc render in a real browser cut off from everything but the server, under the
CSP the server sends (a CDN-loaded page would stay blank; Swagger UI 4 would refuse FastAPI's
OpenAPI 3.1 schema; a too-tight CSP would block ReDoc's search worker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import DESKTOP, Server

# ReDoc's sidebar footer always tries this logo; the CSP blocks it and ReDoc hides the image.
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@pytest.mark.parametrize(
    ("path", "ready"),
    [("/docs", "#swagger-ui .opblock"), ("/redoc", "[data-section-id]")],
    ids=["swagger", "redoc"],
)
def test_api_docs_render_offline(
    browser: Any, server: Server, shots_dir: Path, path: str, ready: str
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    outside: list[str] = []
    problems: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(server.url):
            r.continue_()
        else:  # no network: anything else would fail on an air-gapped server
            outside.append(r.request.url)
            r.abort()

    def console(message: Any) -> None:
        if "Content Security Policy" in message.text and REDOC_LOGO not in message.text:
            problems.append(message.text)

    page.route("**/*", route)
    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    try:
        page.goto(server.url + path)
        page.wait_for_selector(ready, timeout=30_000)
        assert page.locator(ready).count() >= 5  # the operations, not an error box
        assert page.get_by_text("/chat/stream").count() > 0
        if path == "/redoc":  # search runs in a blob: worker
            page.fill("input.search-input", "stream")
            results = page.locator("[data-role='search:results'] li")
            results.first.wait_for(timeout=10_000)
        page.screenshot(path=str(shots_dir / f"api-docs{path.replace('/', '-')}.png"))
    finally:
        context.close()
    assert outside == [] and problems == []
