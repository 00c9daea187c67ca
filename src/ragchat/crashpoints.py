"""Named points where a crash test can kill the process as ``kill -9`` would.

Code that must survive a crash calls ``crashpoint("chat.after_user_message")`` between its
writes. Off (a global compare, nothing else) unless ``Settings.crashpoint`` names a point:
``RAGCHAT_CRASHPOINT=chat.token`` kills the process with SIGKILL the first time that point is
reached, ``chat.token@3`` the third time. ``arm`` is called once at the edge (the CLI's
``load_settings``, so ``ragchat serve`` and ``ragchat kb …``); nothing else reads the setting.
The points are listed in docs/security.md (class 5)."""

from __future__ import annotations

import os
import signal

from ragchat.errors import ConfigError

_armed: str | None = None
_left = 0


def arm(spec: str | None) -> None:
    """``"name"`` or ``"name@N"`` (the Nth time the point is reached); None or "" disarms."""
    global _armed, _left
    if not spec:
        _armed, _left = None, 0
        return
    name, _, nth = spec.partition("@")
    if not name.strip() or (nth and not (nth.isdigit() and int(nth) >= 1)):
        raise ConfigError(f"crashpoint {spec!r}: expected NAME or NAME@N with N >= 1")
    _armed, _left = name.strip(), int(nth) if nth else 1


def crashpoint(name: str) -> None:
    """SIGKILL this process if ``name`` is the armed point reached for the armed time."""
    global _left
    if _armed is None or name != _armed:
        return
    _left -= 1
    if _left == 0:
        os.kill(os.getpid(), signal.SIGKILL)
