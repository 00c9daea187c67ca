"""The web page: ``/`` serves ``ragchat/ui/static/index.html`` when it exists (the chat UI),
else a small placeholder; ``/static`` serves that folder. An API client (one whose ``Accept``
does not ask for HTML) gets the service's description as JSON instead, as the textbook
server's clients expect (seed 004); ``Settings.compat.root`` fixes either. Security headers
(CSP and friends) are added by ``RequestContextMiddleware``."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from ragchat import __version__
from ragchat.api.deps import State

STATIC_DIR = Path(__file__).resolve().parent.parent.parent / "ui" / "static"
router = APIRouter(include_in_schema=False)

PLACEHOLDER = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ragchat</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>ragchat is running</h1>
<p>The chat page is not installed yet. The API is at <a href="/docs">/docs</a>;
try <code>curl -s -X POST localhost:8000/chat -H 'Content-Type: application/json'
-d '{"message": "What are the side effects of ibuprofen?"}'</code>.</p>
<p>Health: <a href="/health">/health</a></p>
</body>
</html>
"""


def wants_page(request: Request, root: str) -> bool:
    """A browser's navigation asks for ``text/html``; curl, SDKs and monitors do not."""
    if root != "auto":
        return root == "page"
    return "text/html" in request.headers.get("accept", "").lower()


@router.get("/")
async def index(request: Request, state: State) -> Response:
    if not wants_page(request, state.settings.compat.root):
        return JSONResponse(
            {
                "name": "ragchat",
                "version": __version__,
                "status": "running",
                "docs": "/docs",
                "health": "/health",
            },
            headers={"Vary": "Accept"},
        )
    page = STATIC_DIR / "index.html"
    if page.is_file():
        return FileResponse(page, media_type="text/html", headers={"Vary": "Accept"})
    return HTMLResponse(PLACEHOLDER, headers={"Vary": "Accept"})
