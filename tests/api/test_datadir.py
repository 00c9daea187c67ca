"""One server per data directory (``api/datadir.py``): the lock names its holder, and a
second ``ragchat serve`` (started for real) stops before touching anything."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragchat.api.datadir import hold_data_dir
from ragchat.errors import DataDirInUse
from ragchat.settings import Settings
from ragchat.store import build_store

from .live_server import HOLD, free_port, serve_cmd, serve_env


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``tmp_path/data``'s lock."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "data")], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_the_lock_names_its_holder_and_dies_with_it(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    expected = f"another ragchat server \\(pid {holder.pid}\\)"
    with pytest.raises(DataDirInUse, match=expected), hold_data_dir(tmp_path / "data"):
        pass
    holder.kill()
    holder.wait()
    with hold_data_dir(tmp_path / "data"), hold_data_dir(tmp_path / "data"):
        pass  # free again (the kernel dropped it), and taken twice by one process


def test_a_second_server_touches_nothing_and_exits_8(
    tmp_path: Path, holder: subprocess.Popen[str]
) -> None:
    """Before: the second server marked the live one's running upload failed, then died on
    the busy port. Now it stops before opening anything, naming the running server."""
    settings = Settings(data_dir=tmp_path / "data")
    store = build_store(settings)
    user = store.ensure_user()
    job = store.create_job(user.id, "notes", total=1)
    store.update_job(job.id, status="running", message="embed 64/500")
    store.close()
    result = subprocess.run(
        serve_cmd(tmp_path / "data", free_port()),
        capture_output=True,
        text=True,
        timeout=300,
        env=serve_env(),
    )
    assert result.returncode == 8, result.stdout + result.stderr
    assert f"another ragchat server (pid {holder.pid})" in result.stderr
    after = build_store(settings)
    assert after.get_job(user.id, job.id).status == "running"
    after.close()


# -- a real server, a real signal ----------------------------------------------------------------
