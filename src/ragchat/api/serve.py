"""``ragchat serve``: the API and web page under uvicorn, holding the data directory's lock
(one server per data directory). SIGTERM exits within seconds: open connections get 5 s to
finish, a running upload stops at its next safe point. One worker by default (rate limits,
stream slots and the knowledge-base registry in process memory); ``--workers N`` runs N
processes on the port, see ``api/workers.py``."""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import uvicorn

from ragchat.errors import PortInUse
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


def log_llm(settings: Settings) -> None:
    """Which chat model answers, and which setting chose it (the environment has several
    conventions: ragchat's own, the openai SDK's, the replaced systems')."""
    log.info("LLM: %s", settings.llm_origin)


def bind(host: str, port: int) -> socket.socket:
    """The listening address, taken before any start-up work (as uvicorn would: address
    reuse on), so that a port in use is said at once rather than after the knowledge bases
    are checked and the models loaded. ``PortInUse`` says how to choose another."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        other = port + 1 if port < 65535 else 8000
        why = "is in use" if exc.errno == errno.EADDRINUSE else "needs privileges"
        raise PortInUse(
            f"port {port} on {host} {why} (another ragchat or another program?). Choose "
            f"another: `ragchat serve --port {other}` or RAGCHAT_API__PORT={other}."
        ) from None
    return sock


def serve(
    settings: Settings,
    host: str | None = None,
    port: int | None = None,
    config_file: Path | None = None,
    workers: int | None = None,
) -> None:
    """Blocks until interrupted. ``host``/``port``/``config_file``/``workers`` override the
    settings."""
    from ragchat.api.app import create_app
    from ragchat.api.datadir import hold_data_dir
    from ragchat.api.logging import configure_logging
    from ragchat.api.stopping import cancel_ingestion

    updates: dict[str, object] = {}
    if config_file is not None:
        updates["config_file"] = Path(config_file)
    given = (("host", host), ("port", port), ("workers", workers))
    api_updates = {k: v for k, v in given if v is not None}
    if api_updates:
        updates["api"] = settings.api.model_copy(update=api_updates)
    if updates:
        settings = settings.model_copy(update=updates)
    host, port = settings.api.host, settings.api.port
    if settings.api.workers > 1:
        from ragchat.api.workers import check_many_workers, run_workers

        check_many_workers(settings)  # before the lock: a refusal touches nothing
        with hold_data_dir(settings.data_dir):
            bind(host, port).close()  # said now; the workers' supervisor binds it again
            configure_logging(settings)
            log_llm(settings)
            run_workers(settings, banner(host, port))
        return
    # A second server on the data directory fails at the lock, one on a taken port at the
    # bind: both before any start-up work, touching nothing.
    with hold_data_dir(settings.data_dir), bind(host, port) as sock:
        configure_logging(settings)
        log_llm(settings)
        app = create_app(settings)
        config = uvicorn.Config(
            app,
            host=settings.api.host,
            port=settings.api.port,
            workers=1,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=5,
            proxy_headers=False,  # the app trusts settings.api.trusted_proxies itself
        )
        server = _AnnouncingServer(config, banner(settings.api.host, settings.api.port))
        server.on_exit = lambda: cancel_ingestion(app)
        server.run(sockets=[sock])


class _AnnouncingServer(uvicorn.Server):
    """Prints the banner once uvicorn listens: start-up ingests and loads models first, and a
    newcomer should not be sent to a URL that does not answer yet."""

    def __init__(self, config: uvicorn.Config, message: str) -> None:
        super().__init__(config)
        self.message = message
        self.on_exit: Callable[[], None] | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """SIGTERM/SIGINT: also tell the app at once (uploads stop while connections drain)."""
        super().handle_exit(sig, frame)
        if self.on_exit is not None:
            self.on_exit()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            print(self.message, flush=True)
