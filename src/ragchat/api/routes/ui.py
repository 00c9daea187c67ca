"""The web page: ``/`` serves ``ragchat/ui/static/index.html`` when it exists (the chat UI),
else a small placeholder; ``/static`` serves that folder. Security headers (CSP and friends)
are added by ``RequestContextMiddleware``."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

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


@router.get("/")
async def index() -> Response:
    page = STATIC_DIR / "index.html"
    if page.is_file():
        return FileResponse(page, media_type="text/html")
    return HTMLResponse(PLACEHOLDER)
