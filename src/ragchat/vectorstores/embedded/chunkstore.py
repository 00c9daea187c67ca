"""Chunk texts, metadata, documents and ingested files of one knowledge base, in SQLite.

SQLite (stdlib) rather than a JSON file: appends, deletes and metadata filters stay cheap as a
collection grows. The file lives in one generation of the knowledge base (``generations.py``):
a committed one is only read; a write first ``fork``s it into the working generation (SQLite's
backup API), where it runs without journal or syncs, and ``seal`` makes it durable before the
generation is committed.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragchat.errors import IndexStateError
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.embedded.generations import fsync_path
from ragchat.vectorstores.filters import as_text, check_key, values_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    label INTEGER UNIQUE,          -- index row label; NULL for parents (not searchable)
    doc_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    parent_id TEXT,
    is_parent INTEGER NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, is_parent, position);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    file_path TEXT,
    n_children INTEGER NOT NULL,
    n_sections INTEGER NOT NULL,
    metadata TEXT NOT NULL,
    added_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_file ON documents (file_path);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    ingested_at TEXT NOT NULL
);
"""


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)


def _private(db: sqlite3.Connection) -> None:
    """A working copy nobody else reads: a crash discards it, so no journal file or sync is
    needed (the rollback journal in memory still serves ROLLBACK)."""
    db.execute("PRAGMA journal_mode=MEMORY")
    db.execute("PRAGMA synchronous=OFF")


class ChunkStore:
    """``create`` makes a new, empty, working store; otherwise ``path`` is opened to read
    (nothing is written to it: a committed generation stays as it was committed).
    ``before_write`` runs before every change: the knowledge base forks a working generation
    there on the first one."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        self.before_write: Callable[[], None] | None = None
        if not create and not path.is_file():
            raise IndexStateError(f"chunk store of knowledge base {path.parent.name!r} is missing")
        self._db = _connect(path)
        if create:
            _private(self._db)
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def _writing(self) -> None:
        if self.before_write is not None:
            self.before_write()

    # -- generations ------------------------------------------------------------------------
    def fork(self, dest: Path) -> None:
        """Copies the current state to ``dest`` and continues there (reads included). A
        sealed file (no journal beside it, never written again) is copied as bytes; one of the
        layout before generations may have a write-ahead log, so SQLite's backup API reads
        it."""
        sealed = not any(
            self.path.with_name(self.path.name + s).exists() for s in ("-wal", "-journal")
        )
        if sealed:
            shutil.copyfile(self.path, dest)
        copy = _connect(dest)
        try:
            if not sealed:
                _private(copy)
                self._db.backup(copy)
            _private(copy)
            copy.executescript(_SCHEMA)  # a store of an older layout gains new tables
        except BaseException:
            copy.close()
            raise
        self._db.close()
        self._db, self.path = copy, dest

    def seal(self) -> None:
        """Makes the working copy a self-contained, durable file (no journal beside it)."""
        self._db.execute("PRAGMA journal_mode=DELETE")
        fsync_path(self.path)

    # -- transactions: the KB writes indexes and rows together, then commits -------------
    def begin(self) -> None:
        self._writing()
        self._db.execute("BEGIN")

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        self._db.execute("ROLLBACK")

    # -- writing ---------------------------------------------------------------------------
    def insert_chunks(self, chunks: Sequence[Chunk], labels: Mapping[str, int]) -> None:
        self._writing()
        self._db.executemany(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    c.chunk_id,
                    labels.get(c.chunk_id),
                    c.doc_id,
                    c.position,
                    c.parent_id,
                    int(c.is_parent),
                    c.text,
                    json.dumps(c.metadata, sort_keys=True),
                )
                for c in chunks
            ],
        )

    def insert_document(self, row: DocumentRow) -> None:
        self._writing()
        self._db.execute(
            "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row.values(lambda metadata: json.dumps(metadata, sort_keys=True)),
        )

    def record_file(self, path: str, sha256: str, when: str) -> None:
        self._writing()
        self._db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (path, sha256, when))

    def forget_file(self, path: str) -> None:
        self._writing()
        self._db.execute("DELETE FROM files WHERE path = ?", (path,))

    def set_document_file(self, doc_id: str, path: str) -> None:
        """Points the document at another file with the same bytes (its first one is gone)."""
        self._writing()
        self._db.execute("UPDATE documents SET file_path = ? WHERE doc_id = ?", (path, doc_id))

    def delete_document(self, doc_id: str) -> list[int]:
        """Removes the document's rows and returns the index labels to drop."""
        self._writing()
        labels = [
            int(r[0])
            for r in self._db.execute(
                "SELECT label FROM chunks WHERE doc_id = ? AND label IS NOT NULL", (doc_id,)
            )
        ]
        self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        self._db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return labels

    # -- reading ---------------------------------------------------------------------------
    def orphan_documents(self) -> list[str]:
        """Doc ids that have chunks but no document row: what a crash of the layout before
        generations could leave (chunks were committed before their document)."""
        q = (
            "SELECT DISTINCT doc_id FROM chunks WHERE doc_id NOT IN "
            "(SELECT doc_id FROM documents) ORDER BY doc_id"
        )
        return [str(r[0]) for r in self._db.execute(q)]

    def quick_check(self) -> str:
        """SQLite's own structural check: "ok" or what is broken."""
        return "; ".join(str(r[0]) for r in self._db.execute("PRAGMA quick_check"))

    def file_sha(self, path: str) -> str | None:
        row = self._db.execute("SELECT sha256 FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else str(row[0])

    def files(self) -> list[tuple[str, str]]:
        return [(str(p), str(s)) for p, s in self._db.execute("SELECT path, sha256 FROM files")]

    def paths_with_sha(self, sha256: str) -> list[str]:
        rows = self._db.execute("SELECT path FROM files WHERE sha256 = ? ORDER BY path", (sha256,))
        return [str(r[0]) for r in rows]

    def docs_of_file(self, path: str) -> list[str]:
        rows = self._db.execute(
            "SELECT doc_id FROM documents WHERE file_path = ? ORDER BY doc_id", (path,)
        )
        return [str(r[0]) for r in rows]

    def has_document(self, doc_id: str) -> bool:
        q = "SELECT 1 FROM documents WHERE doc_id = ?"
        return self._db.execute(q, (doc_id,)).fetchone() is not None

    def known_documents(self, doc_ids: Iterable[str]) -> set[str]:
        ids = list(doc_ids)
        found: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            q = f"SELECT doc_id FROM documents WHERE doc_id IN ({marks})"
            found.update(str(r[0]) for r in self._db.execute(q, part))
        return found

    def documents(self) -> list[DocumentRow]:
        rows = self._db.execute("SELECT * FROM documents ORDER BY added_at, source")
        return [
            DocumentRow(r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), json.loads(r[7]), r[8])
            for r in rows
        ]

    def count(self, *, parents: bool) -> int:
        q = "SELECT COUNT(*) FROM chunks WHERE is_parent = ?"
        return int(self._db.execute(q, (int(parents),)).fetchone()[0])

    def document_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def label_map(self) -> dict[int, str]:
        rows = self._db.execute("SELECT label, chunk_id FROM chunks WHERE label IS NOT NULL")
        return {int(label): str(cid) for label, cid in rows}

    def max_label(self) -> int:
        row = self._db.execute("SELECT MAX(label) FROM chunks").fetchone()
        return -1 if row[0] is None else int(row[0])

    def get(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        found: dict[str, Chunk] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            q = f"SELECT * FROM chunks WHERE chunk_id IN ({marks})"
            for row in self._db.execute(q, part):
                found[row[0]] = _to_chunk(row)
        return [found[c] for c in chunk_ids if c in found]

    def at_position(self, doc_id: str, position: int) -> Chunk | None:
        row = self._db.execute(
            "SELECT * FROM chunks WHERE doc_id = ? AND is_parent = 0 AND position = ?",
            (doc_id, position),
        ).fetchone()
        return None if row is None else _to_chunk(row)

    def labels_matching(self, filters: Mapping[str, Any]) -> list[int]:
        """Labels of children whose doc_id / metadata match every filter (value or list)."""
        where = ["label IS NOT NULL"]
        params: list[Any] = []
        for key, value in sorted(filters.items()):
            values = values_of(value)
            marks = ",".join("?" * len(values))
            if key == "doc_id":
                where.append(f"doc_id IN ({marks})")
                params.extend(str(v) for v in values)
            else:
                check_key(key)
                # Compare as text so 1, "1" and 1.0-free integers all match chapter filters.
                where.append(f"CAST(json_extract(metadata, '$.{key}') AS TEXT) IN ({marks})")
                params.extend(as_text(v) for v in values)
        q = f"SELECT label FROM chunks WHERE {' AND '.join(where)}"
        return [int(r[0]) for r in self._db.execute(q, params)]

    def iter_parents(self) -> Iterator[Chunk]:
        q = "SELECT * FROM chunks WHERE is_parent = 1 ORDER BY doc_id, position"
        yield from (_to_chunk(r) for r in self._db.execute(q))

    def iter_children(self) -> Iterator[Chunk]:
        yield from (
            _to_chunk(r)
            for r in self._db.execute("SELECT * FROM chunks WHERE is_parent = 0 ORDER BY label")
        )


def _to_chunk(row: tuple[Any, ...]) -> Chunk:
    return Chunk(
        chunk_id=row[0],
        doc_id=row[2],
        position=int(row[3]),
        parent_id=row[4],
        is_parent=bool(row[5]),
        text=row[6],
        metadata=json.loads(row[7]),
    )
