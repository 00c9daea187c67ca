"""The OpenAPI pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with no network.

FastAPI's own pages load their JavaScript and CSS from a CDN, so on an air-gapped server they
render blank. The assets here come from the ``fastapi-offline`` wheel (Swagger UI 5 and ReDoc 2,
plus a favicon) and are mounted same-origin under ``/docs-assets``; only its files are used, not
its app factory. Not ``swagger-ui-bundle``: its 1.x ships Swagger UI 4, which only accepts
OpenAPI 3.0 documents and shows "Unable to render this definition" for FastAPI's 3.1 schema;
nor does it ship ReDoc. The CSP these pages get (``DOCS_CSP``) allows no other origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
DOCS_URL = "/docs"
REDOC_URL = "/redoc"
# Swagger UI otherwise shows a badge image fetched from validator.swagger.io (with the schema
# URL in the query): blocked by the CSP anyway, and a leak we do not want to attempt.
SWAGGER_PARAMETERS: dict[str, Any] = {"validatorUrl": None}


def install_docs(app: FastAPI) -> None:
    """Mounts the assets and adds both pages; the app must be built with ``docs_url=None`` and
    ``redoc_url=None`` so FastAPI's CDN pages do not take the paths first. The OAuth2 redirect
    page is not served: the API authenticates by cookie or API key, never by an OAuth2 flow."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")

    def urls(request: Request) -> tuple[str, str]:
        root = str(request.scope.get("root_path", "")).rstrip("/")  # behind a path prefix
        return f"{root}{app.openapi_url}", f"{root}{ASSETS_URL}"

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
            swagger_ui_parameters={**SWAGGER_PARAMETERS, **(app.swagger_ui_parameters or {})},
        )

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} API",
            redoc_js_url=f"{assets}/redoc.standalone.js",
            redoc_favicon_url=f"{assets}/favicon.png",
            with_google_fonts=False,
        )
