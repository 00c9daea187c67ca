"""End-to-end fixtures for the chat page: a real ``ragchat serve`` subprocess on a free
loopback port over a temporary data directory, and Debian's Chromium driven by Python
Playwright (``scripts/browser-deps`` installs both; without them the browser tests skip).

Screenshots go to ``$RAGCHAT_UI_SCREENSHOTS`` or a temporary folder; a failing test saves one
more and prints where they are."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("RAGCHAT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
START_TIMEOUT_S = float(os.environ.get("RAGCHAT_UI_START_TIMEOUT", "240"))
SERVE_SNIPPET = (
    "import sys\n"
    "from ragchat.api.serve import serve\n"
    "from ragchat.settings import Settings\n"
    "serve(Settings(), host='127.0.0.1', port=int(sys.argv[1]))\n"
)
DESKTOP = {"width": 1280, "height": 800}
NARROW = {"width": 420, "height": 800}


# -- the server -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_command(port: int, data_dir: Path) -> list[str]:
    """``ragchat serve`` when the CLI has it, else ``ragchat.api.serve.serve`` directly."""
    ragchat = Path(sys.executable).with_name("ragchat")
    if ragchat.exists():
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
        shown = subprocess.run(
            [str(ragchat), "serve", "--help"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        if shown.returncode == 0 and "--port" in shown.stdout and "--host" in shown.stdout:
            cmd = [str(ragchat), "serve", "--host", "127.0.0.1", "--port", str(port)]
            if "--data-dir" in shown.stdout:
                cmd += ["--data-dir", str(data_dir)]
            return cmd
    return [sys.executable, "-c", SERVE_SNIPPET, str(port)]


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


@dataclass
class Server:
    data_dir: Path
    log_path: Path
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, n: int = 60) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])

    def start(self) -> Server:
        env = {
            **os.environ,
            "RAGCHAT_DATA_DIR": str(self.data_dir),
            # A test clicks faster than a person: no answer rate limit here.
            "RAGCHAT_API__RATE_LIMIT_PER_MINUTE": "0",
            "RAGCHAT_API__PORT": str(self.port),
            "PYTHONUNBUFFERED": "1",
            **self.env,
        }
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                serve_command(self.port, self.data_dir),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"ragchat serve exited with {self.proc.returncode}:\n{self.log_tail()}"
                )
            try:
                health = get_json(f"{self.url}/health")
            except (urllib.error.URLError, OSError, ValueError):
                time.sleep(0.5)
                continue
            if health.get("status") != "ok":
                print(f"ragchat serve is up but degraded: {health.get('degraded')}")
            return self
        self.stop()
        raise RuntimeError(
            f"ragchat serve did not answer /health in {START_TIMEOUT_S:.0f} s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("ui-server")
    srv = Server(data_dir=root / "data", log_path=root / "server.log")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Servers of one test's own over one data directory (restarts keep the data);
    keyword arguments are extra environment variables, e.g. RAGCHAT_API__...="""
    started: list[Server] = []
    port = free_port()

    def make(**env: str) -> Server:
        srv = Server(
            data_dir=tmp_path / "data", log_path=tmp_path / "server.log", port=port, env=env
        )
        started.append(srv)
        return srv.start()

    yield make
    for srv in started:
        srv.stop()


# -- the browser ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: run scripts/browser-deps (installs Debian's chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="Python playwright is not installed: run scripts/browser-deps",
    )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("RAGCHAT_UI_SCREENSHOTS")
    if wanted:
        path = Path(wanted)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("ui-screenshots")


class Problems:
    """Uncaught errors and CSP violations seen by a page."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []

    def console(self, message: Any) -> None:
        text = message.text
        if "Content Security Policy" in text or "Content-Security-Policy" in text:
            self.errors.append(f"CSP: {text}")

    def page_error(self, error: Any) -> None:
        self.errors.append(f"uncaught: {error}")

    def dialog(self, dialog: Any) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


@dataclass
class UI:
    """One browser tab on the page, plus helpers a test needs."""

    page: Any
    server: Server
    shots: Path
    problems: Problems
    name: str

    def open(self, path: str = "/") -> None:
        self.page.goto(self.server.url + path)
        self.page.wait_for_selector("body[data-ready='true']", timeout=30_000)

    def shot(self, label: str) -> Path:
        path = self.shots / f"{self.name}-{label}.png"
        self.page.screenshot(path=str(path))
        return path

    def ask(
        self, text: str, *, agent: str | None = None, kb: str | None = None, timeout: float = 90_000
    ) -> Any:
        """Types a message, sends it with Enter, waits for the reply to finish; the reply.
        ``agent``/``kb``: what "Answer from" is set to first (a sample agent, or one of the
        knowledge bases)."""
        page = self.page
        if agent is not None:
            page.select_option("#answer-from", f"agent:{agent}")
        if kb is not None:
            page.select_option("#answer-from", f"kb:{kb}")
        before = page.locator("article.msg-assistant").count()
        page.fill("#composer-input", text)
        page.press("#composer-input", "Enter")
        reply = page.locator("article.msg-assistant").nth(before)
        reply.wait_for()
        page.wait_for_function(
            "n => { const r = document.querySelectorAll('article.msg-assistant')[n];"
            " return r && !r.classList.contains('streaming'); }",
            arg=before,
            timeout=timeout,
        )
        # The stream has ended too: the message box is back.
        page.wait_for_function(
            "() => !document.querySelector('#composer-input').disabled", timeout=timeout
        )
        return reply

    def api(self, method: str, path: str, data: Any = None) -> Any:
        """An API call with this tab's cookie (its user)."""
        response = self.page.request.fetch(self.server.url + path, method=method, data=data)
        assert response.ok, f"{method} {path}: {response.status} {response.text()}"
        return response.json() if response.status != 204 else None


def _new_ui(
    browser: Any, server: Server, shots: Path, name: str, viewport: dict[str, int]
) -> tuple[Any, UI]:
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(30_000)
    page = context.new_page()
    problems = Problems()
    page.on("console", problems.console)
    page.on("pageerror", problems.page_error)
    page.on("dialog", problems.dialog)
    return context, UI(page=page, server=server, shots=shots, problems=problems, name=name)


@pytest.fixture
def ui_factory(
    browser: Any, shots_dir: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., UI]]:
    """``ui_factory(server, viewport=DESKTOP)``: a fresh browser profile (a new user)."""
    contexts: list[Any] = []
    uis: list[UI] = []
    base = request.node.name.replace("[", "-").replace("]", "")

    def make(server: Server, viewport: dict[str, int] = DESKTOP, context: Any = None) -> UI:
        name = base if not uis else f"{base}-{len(uis)}"
        if context is None:
            context, ui = _new_ui(browser, server, shots_dir, name, viewport)
            contexts.append(context)
        else:  # another tab of the same profile (same cookie)
            page = context.new_page()
            problems = Problems()
            page.on("console", problems.console)
            page.on("pageerror", problems.page_error)
            page.on("dialog", problems.dialog)
            ui = UI(page=page, server=server, shots=shots_dir, problems=problems, name=name)
        uis.append(ui)
        return ui

    request.node._ui_list = uis
    yield make
    problems = [p for ui in uis for p in ui.problems.errors]
    for context in contexts:
        context.close()
    assert not problems, f"the page reported problems: {problems}"


@pytest.fixture
def ui(ui_factory: Callable[..., UI], server: Server) -> UI:
    """The page at 1280x800 against the session's server, opened on /."""
    tab = ui_factory(server)
    tab.open()
    return tab


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    uis: list[UI] = getattr(item, "_ui_list", [])
    saved = []
    for ui in uis:
        try:
            saved.append(str(ui.shot("FAILED")))
        except Exception as exc:  # the page may be gone
            saved.append(f"(no screenshot: {exc})")
    if uis:
        report.sections.append(("screenshots", f"folder: {uis[0].shots}\n" + "\n".join(saved)))
        report.sections.append(("server log (tail)", uis[0].server.log_tail(40)))
