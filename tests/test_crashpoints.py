"""``crashpoint``: nothing unless armed; armed, SIGKILL at the named point's Nth arrival."""

from __future__ import annotations

import signal
import subprocess
import sys

from ragchat import crashpoints
from ragchat.settings import Settings

SCRIPT = """
import sys
from ragchat.crashpoints import arm, crashpoint
arm(sys.argv[1])
for i in range(1, 4):
    crashpoint("other")
    print(i, flush=True)
    crashpoint("here")
"""


def run(spec: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, spec], capture_output=True, text=True, timeout=60
    )


def test_an_armed_point_kills_the_process_at_its_nth_arrival() -> None:
    first = run("here")
    assert (first.returncode, first.stdout.split()) == (-signal.SIGKILL, ["1"])
    third = run("here#3")
    assert (third.returncode, third.stdout.split()) == (-signal.SIGKILL, ["1", "2", "3"])
    elsewhere = run("nowhere")
    assert (elsewhere.returncode, elsewhere.stdout.split()) == (0, ["1", "2", "3"])


def test_unarmed_points_do_nothing_and_the_setting_names_the_point() -> None:
    crashpoints.arm(None)
    crashpoints.crashpoint("chat.token")  # still here
    assert Settings(crash_at="chat.token#3").crash_at == "chat.token#3"
    assert Settings().crash_at is None


def test_a_point_can_send_sigterm_instead() -> None:
    """Without a handler SIGTERM ends the process at once, as SIGKILL does; the point fires
    once, so a process that handles the signal is not signalled again."""
    term = run("here#2@TERM")
    assert (term.returncode, term.stdout.split()) == (-signal.SIGTERM, ["1", "2"])
    handled = subprocess.run(
        [
            sys.executable,
            "-c",
            "import signal\nsignal.signal(signal.SIGTERM, lambda *a: print('term', flush=True))\n"
            + SCRIPT,
            "here@TERM",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (handled.returncode, handled.stdout.split()) == (0, ["1", "term", "2", "3"])
