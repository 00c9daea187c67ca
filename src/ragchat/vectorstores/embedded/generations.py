"""Copy-on-write generations of an embedded knowledge base: a write is visible all at once or
not at all, and a crash at any instant leaves a state the next open recovers by itself.

Layout of ``<root>/<name>/``::

    CURRENT          "g00000007": the committed generation (the only commit point)
    g00000007/       manifest.json, chunks.sqlite, dense_*.npy [hnsw.bin], bm25_*
    g00000006/       the previous generation, kept for readers still loading it and for repair
    .lock            flock held by the one writer of this knowledge base

A writer copies the committed chunk store into a fresh ``g<N+1>/`` at its first change (the
file's bytes; SQLite's backup API for a file with a log beside it), writes everything there
(an index it did not change is hard-linked), fsyncs it, then flips ``CURRENT`` (temp file +
``os.replace`` + fsync of the folder). A committed generation is never modified again, so an
open reader keeps a consistent snapshot however many writes follow. On open, generations newer
than ``CURRENT`` (a write that died before its flip) and older than its predecessor are
removed, unless a live writer holds the lock. The layout before generations (all files in
``<name>/`` itself, no ``CURRENT``) opens as "generation 0" and moves into ``g00000001/`` on
its first write.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ragchat.errors import IndexStateError
from ragchat.vectorstores.lock import WriteLock

log = logging.getLogger(__name__)

CURRENT = "CURRENT"
_GEN = re.compile(r"^g(\d{8})$")
# Files of the layout before generations, removed once a generation is committed.
LEGACY_FILES = (
    "manifest.json",
    "manifest.tmp.json",
    "chunks.sqlite",
    "chunks.sqlite-wal",
    "chunks.sqlite-shm",
    "chunks.sqlite-journal",
    "dense_vectors.npy",
    "dense_labels.npy",
    "dense_vectors.tmp.npy",
    "dense_labels.tmp.npy",
    "hnsw.bin",
    "hnsw.tmp.bin",
    "bm25_tf.npz",
    "bm25_labels.npy",
    "bm25_vocab.json",
    "bm25_tf.tmp.npz",
    "bm25_labels.tmp.npy",
    "bm25_vocab.tmp.json",
)
DENSE_FILES = ("dense_vectors.npy", "dense_labels.npy", "hnsw.bin")
BM25_FILES = ("bm25_tf.npz", "bm25_labels.npy", "bm25_vocab.json")


def gen_name(number: int) -> str:
    return f"g{number:08d}"


@dataclass(frozen=True)
class Generation:
    """A committed (or, while written, working) state; number 0 is the legacy layout."""

    number: int
    dir: Path

    @property
    def legacy(self) -> bool:
        return self.number == 0


def exists(path: Path) -> bool:
    """Whether ``path`` holds a knowledge base (committed generation or legacy layout)."""
    return (path / CURRENT).is_file() or (path / "manifest.json").is_file()


def current(path: Path) -> Generation | None:
    """The committed generation of the knowledge base at ``path``; None when there is none."""
    try:
        text = (path / CURRENT).read_text().strip()
    except FileNotFoundError:
        return Generation(0, path) if (path / "manifest.json").is_file() else None
    except OSError as exc:
        raise IndexStateError(f"knowledge base {path.name!r}: cannot read CURRENT: {exc}") from exc
    match = _GEN.match(text)
    if match is None:
        raise IndexStateError(f"knowledge base {path.name!r}: CURRENT is corrupt ({text[:40]!r})")
    return Generation(int(match.group(1)), path / text)


def generations(path: Path) -> list[int]:
    """Numbers of the generation folders present (committed or not), ascending."""
    if not path.is_dir():
        return []
    found = (_GEN.match(p.name) for p in path.iterdir() if p.is_dir())
    return sorted(int(m.group(1)) for m in found if m)


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(directory: Path) -> None:
    """Every file of ``directory``, then the folder itself (its entries)."""
    for child in directory.iterdir():
        if child.is_file():
            fsync_path(child)
    fsync_path(directory)


def link_files(src: Path, dest: Path, files: tuple[str, ...] | list[str]) -> bool:
    """Hard-links the files of an index a write did not change from the previous generation
    (committed files are never modified, so sharing them is safe); False when not possible
    (nothing to link, another file system), and then nothing is left half-linked."""
    present = [f for f in files if (src / f).is_file()]
    if not present:
        return False
    try:
        for f in present:
            os.link(src / f, dest / f)
    except OSError:
        for f in present:
            (dest / f).unlink(missing_ok=True)
        return False
    return True


def flip(path: Path, generation: Generation) -> None:
    """Makes ``generation`` the committed one: the single atomic step of a commit."""
    tmp = path / (CURRENT + ".tmp")
    with tmp.open("w") as fh:
        fh.write(gen_name(generation.number) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / CURRENT)
    fsync_path(path)


def tidy(path: Path, *, keep_previous: bool = True) -> list[str]:
    """Removes what no committed state needs; the caller holds the write lock. Returns what
    was done, one line each (logged by the caller)."""
    done: list[str] = []
    with contextlib.suppress(FileNotFoundError):
        (path / (CURRENT + ".tmp")).unlink()
    cur = current(path)
    if cur is not None and not cur.legacy and not (cur.dir / "manifest.json").is_file():
        return []  # CURRENT names a missing generation: damage for `kb repair`, not for us
    committed = cur.number if cur is not None else 0
    for number in generations(path):
        if number > committed:
            done.append(
                f"rolled back an interrupted write (removed uncommitted {gen_name(number)})"
            )
        elif number < committed - (1 if keep_previous else 0):
            done.append(f"removed old generation {gen_name(number)}")
        else:
            continue
        shutil.rmtree(path / gen_name(number), ignore_errors=True)
    if cur is not None and not cur.legacy:
        stale = [n for n in LEGACY_FILES if (path / n).exists()]
        for name in stale:
            (path / name).unlink(missing_ok=True)
        if stale:
            done.append("removed the files of the layout before generations")
    return done


def recover(path: Path) -> list[str]:
    """``tidy`` when no writer is active (a live writer's working generation is left alone);
    logs and returns what was done."""
    lock = WriteLock(path)
    try:
        if not path.is_dir() or not lock.try_acquire():
            return []
    except OSError:  # a read-only copy: nothing can be tidied, and nothing needs to be
        return []
    try:
        done = tidy(path)
    finally:
        lock.release()
    log_tidy(path.name, done)
    return done


def log_tidy(name: str, done: list[str]) -> None:
    """A rollback is a warning (a write was lost); routine removals are info."""
    for line in done:
        level = logging.WARNING if line.startswith("rolled back") else logging.INFO
        log.log(level, "knowledge base %s: %s", name, line)
