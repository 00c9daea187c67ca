"""``ragchat serve``: the API and web page under uvicorn (one worker: rate limits, stream
slots and the knowledge-base registry live in process memory)."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import uvicorn

from ragchat.settings import Settings

log = logging.getLogger(__name__)


def banner(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url = f"http://{shown}:{port}"
    return (
        f"ragchat is running at {url} — open it in a browser, or try:\n"
        f"  curl -s {url}/health\n"
        f"  curl -s -X POST {url}/chat -H 'Content-Type: application/json' "
        """-d '{"message": "What are the side effects of ibuprofen?"}'\n"""
        f"API docs: {url}/docs · OpenAI-compatible base URL: {url}/v1"
    )


def serve(
    settings: Settings,
    host: str | None = None,
    port: int | None = None,
    config_file: Path | None = None,
) -> None:
    """Blocks until interrupted. ``host``/``port``/``config_file`` override the settings."""
    from ragchat.api.app import create_app
    from ragchat.api.logging import configure_logging

    updates: dict[str, object] = {}
    if config_file is not None:
        updates["config_file"] = Path(config_file)
    api_updates = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    if api_updates:
        updates["api"] = settings.api.model_copy(update=api_updates)
    if updates:
        settings = settings.model_copy(update=updates)
    configure_logging(settings)
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.api.host,
        port=settings.api.port,
        workers=1,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
        proxy_headers=False,  # the app trusts settings.api.trusted_proxies itself
    )
    _AnnouncingServer(config, banner(settings.api.host, settings.api.port)).run()


class _AnnouncingServer(uvicorn.Server):
    """Prints the banner once uvicorn listens: start-up ingests and loads models first, and a
    newcomer should not be sent to a URL that does not answer yet."""

    def __init__(self, config: uvicorn.Config, message: str) -> None:
        super().__init__(config)
        self.message = message

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            print(self.message, flush=True)
