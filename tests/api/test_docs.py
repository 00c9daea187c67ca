"""The OpenAPI pages work with no network: every asset they reference is served by the app
itself, and their CSP names no other origin."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from .conftest import AppFactory

ASSET_TYPES = {
    ".js": ("text/javascript", "application/javascript"),
    ".css": ("text/css",),
    ".png": ("image/png",),
}
REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url:\s*'([^']+)'""")


@pytest.fixture
def api(make_app: AppFactory) -> TestClient:
    """A cheap app (fake engine): the docs do not depend on the engine."""
    return make_app()


def references(html: str) -> list[str]:
    """Every URL the page loads: script/link/ReDoc spec attributes and Swagger UI's ``url``."""
    return [a or b for a, b in REFERENCE.findall(html)]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/docs", {"/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css"}),
        ("/redoc", {"/docs-assets/redoc.standalone.js"}),
    ],
)
def test_docs_pages_load_only_same_origin_assets(
    api: TestClient, path: str, expected: set[str]
) -> None:
    r = api.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    urls = references(r.text)
    assert expected <= set(urls) and "/openapi.json" in urls
    assert "cdn" not in r.text.lower() and "http:" not in r.text and "https:" not in r.text
    assets = [u for u in urls if u != "/openapi.json"]
    for url in assets:
        assert url.startswith("/") and not url.startswith("//"), url
        asset = api.get(url)
        assert asset.status_code == 200, url
        suffix = url[url.rfind(".") :]
        assert asset.headers["content-type"].startswith(ASSET_TYPES[suffix]), url
        assert asset.content  # a real file, not an empty placeholder


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_csp_allows_no_external_origin(api: TestClient, path: str) -> None:
    csp = api.get(path).headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert directives["default-src"] == "'self'"
    allowed = {"'self'", "'none'", "'unsafe-inline'", "data:", "blob:"}
    for name, sources in directives.items():
        assert set(sources.split()) <= allowed, (name, sources)
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"


def test_other_html_keeps_the_strict_csp(api: TestClient) -> None:
    csp = api.get("/", headers={"Accept": "text/html"}).headers["content-security-policy"]
    assert "unsafe-inline" not in csp and "blob:" not in csp


def test_openapi_schema_is_served_and_swagger_ui_reads_its_version(api: TestClient) -> None:
    r = api.get("/openapi.json")
    assert r.status_code == 200
    schema = r.json()
    assert "/health" in schema["paths"] and "/docs" not in schema["paths"]
    # FastAPI emits OpenAPI 3.1; Swagger UI 4 (e.g. swagger-ui-bundle 1.x) only reads 3.0 and
    # shows "Unable to render this definition". Swagger UI 5 carries an isOAS31 selector.
    assert schema["openapi"].startswith("3.1.")
    assert b"isOAS31" in api.get("/docs-assets/swagger-ui-bundle.js").content


def test_docs_behind_a_path_prefix_point_under_it(make_app: AppFactory) -> None:
    prefixed = TestClient(make_app().app, root_path="/rag")
    urls = references(prefixed.get("/docs").text)
    assert "/rag/openapi.json" in urls and "/rag/docs-assets/swagger-ui-bundle.js" in urls
