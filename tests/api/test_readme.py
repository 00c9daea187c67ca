"""The README's API commands, run top to bottom as written against a real ``ragchat serve`` on a
fresh data directory (the sample knowledge bases ingested, the default rate limits): every
command answers without an HTTP error, each id is captured by the commands themselves, and the
answers cite what the README says they cite."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .live_server import LiveServer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# Any HTTP error stops the script (set -e), with the server's answer in the log.
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body --max-time 180 "$@"; }
"""


def api_commands() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Web page and API", 1)[1]
    found = re.search(r"```bash\n(.*?)```", section, re.S)
    assert found is not None, "no bash block under 'Web page and API'"
    return found.group(1)


def test_the_readme_api_section_runs_top_to_bottom(tmp_path: Path) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (apt install jq): the README's commands use it")
    commands = api_commands()
    for name in ("SESSION_ID", "JOB_ID", "CONV_ID", "DOC_ID", "KEY_ID", "KEY"):
        uses = [m.start() for m in re.finditer(rf"\b{name}\b", commands)]
        assert uses, name
        for at in uses:  # captured by a command (NAME=…) and used as $NAME: never typed in
            assert commands[at - 1] == "$" or commands[at + len(name)] == "=", (name, at)
    server = LiveServer(
        tmp_path / "data",
        tmp_path / "server.log",
        RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES="true",
        RAGCHAT_API__RATE_LIMIT_PER_MINUTE="10",  # the default: the sequence fits in it
    )
    try:
        work = tmp_path / "work"
        work.mkdir()
        (work / "examples").symlink_to(ROOT / "examples")
        script = PRELUDE + commands.replace("http://127.0.0.1:8000", server.url, 1)
        ran = subprocess.run(
            ["bash", "-c", script],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "LC_ALL": "C.UTF-8"},
            check=False,
        )
    finally:
        server.kill()
    out = ran.stdout
    assert ran.returncode == 0, f"{ran.stderr[-3000:]}\n{out[-3000:]}"
    assert '"kb":"animals"' in out.replace(" ", "")  # the renamed knowledge base, by its name
    assert "Fees 2026, row 6" in out  # a cell, cited by its row
    assert "00:00:19.500–00:00:31.000 (Tom Reid)" in out  # a sentence, by its cue
