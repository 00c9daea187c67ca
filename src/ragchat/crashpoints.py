"""Named points on the write path where a test can kill the process as ``kill -9`` would.

``RAGCHAT_CRASH_AT=save.dense`` (``Settings.crash_at``, armed once by the CLI and the server at
start-up) SIGKILLs the process the first time the write path reaches ``save.dense``;
``save.dense#2`` the second time; ``save.dense@TERM`` sends SIGTERM instead (a service stop).
Unarmed, a crash point is one comparison. The points, in the order a write reaches them:
``ingest.parse`` (a file loaded), ``ingest.embed`` (all new chunks embedded), ``ingest.chunks``
(chunks added), ``ingest.documents`` (document rows added; files and manifest not yet),
``save.begin`` (working generation created), ``save.chunks`` (chunk store sealed),
``save.dense``, ``save.bm25``, ``save.manifest`` (files written), ``save.fsync`` (synced, not
yet committed), ``save.flipped`` (committed, old generations not yet tidied). pgvector:
``pg.chunks_written``, ``pg.index_built`` (a bulk load's HNSW index, not committed),
``pg.before_commit``. ``kb migrate``: ``migrate.*`` (``vectorstores/migrate.py``).
"""

from __future__ import annotations

import os
import signal

_armed: list[tuple[str, int, signal.Signals]] = []  # (point, hits left, signal to send)


def arm(spec: str | None) -> None:
    """Arms ``point``, ``point#n`` (the n-th time it is reached) or either with ``@TERM``
    (send SIGTERM, what a service manager's stop sends, and carry on: the process's own
    handling of the signal is under test); None or "" disarms."""
    _armed.clear()
    if spec:
        where, _, sig = spec.partition("@")
        point, _, nth = where.partition("#")
        signum = signal.Signals[f"SIG{sig.strip().upper()}"] if sig else signal.SIGKILL
        _armed.append((point.strip(), int(nth) if nth else 1, signum))


def crashpoint(name: str) -> None:
    if not _armed or _armed[0][0] != name:
        return
    point, left, signum = _armed[0]
    if left > 1:
        _armed[0] = (point, left - 1, signum)
        return
    _armed.clear()  # once: a SIGTERMed process goes on to its next points
    os.kill(os.getpid(), signum)
