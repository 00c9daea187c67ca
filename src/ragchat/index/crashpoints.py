"""Named points on the write path where a test can kill the process as ``kill -9`` would.

``RAGCHAT_CRASH_AT=save.dense`` (``Settings.crash_at``, armed once by the CLI and the server at
start-up) SIGKILLs the process the first time the write path reaches ``save.dense``;
``save.dense#2`` the second time. Unarmed, a crash point is one comparison. The points, in the
order a write reaches them: ``ingest.parse`` (a file loaded), ``ingest.embed`` (all new chunks
embedded), ``ingest.chunks`` (chunks added), ``ingest.documents`` (document rows added; files
and manifest not yet), ``save.begin`` (working generation created), ``save.chunks`` (chunk
store sealed), ``save.dense``, ``save.bm25``, ``save.manifest`` (files written),
``save.fsync`` (synced, not yet committed), ``save.flipped`` (committed, old generations not
yet tidied).
"""

from __future__ import annotations

import os
import signal

_armed: list[tuple[str, int]] = []  # (point, hits left before the kill)


def arm(spec: str | None) -> None:
    """Arms ``point`` or ``point#n`` (the n-th time it is reached); None or "" disarms."""
    _armed.clear()
    if spec:
        point, _, nth = spec.partition("#")
        _armed.append((point.strip(), int(nth) if nth else 1))


def crashpoint(name: str) -> None:
    if not _armed or _armed[0][0] != name:
        return
    point, left = _armed[0]
    if left > 1:
        _armed[0] = (point, left - 1)
        return
    os.kill(os.getpid(), signal.SIGKILL)
