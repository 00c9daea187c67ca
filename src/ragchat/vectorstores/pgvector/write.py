"""Writing a pgvector knowledge base's rows in bulk, and reading back what ``kb check``
compares: COPY of chunks (with vectors) and of BM25 postings, orphans and statistics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg.types.json import Jsonb

from ragchat.embed.base import Matrix
from ragchat.types import Chunk
from ragchat.vectorstores.filters import flat_metadata

COLUMNS = "chunk_id, doc_id, position, parent_id, is_parent, text, metadata"


def _copy_text(value: str) -> str:
    """``value`` escaped for COPY's text format."""
    if any(ch in value for ch in "\\\t\n\r"):
        return (
            value.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return value


def copy_chunks(
    conn: Any,
    chunks_table: str,
    terms_table: str,
    chunks: Sequence[Chunk],
    children: Sequence[Chunk],
    vectors: Matrix,
    stats: Sequence[tuple[Counter[str], int]],
    *,
    freeze: bool = False,
) -> None:
    """Inserts ``chunks`` (``children`` with their vectors and term counts) in this
    transaction; row ids come from the table's sequence, in the order given (BM25 ties are
    broken by it, as the embedded index breaks them by label). ``freeze``: the tables were
    created in this transaction (a bulk load): rows are written frozen and their pages marked
    all-visible, so BM25's index-only scans never visit the table, with no VACUUM after."""
    ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'row_id')) FROM generate_series(1, %s)",
            [chunks_table, len(chunks)],
        ).fetchall()
    ]
    vec_of = {c.chunk_id: v for c, v in zip(children, vectors, strict=True)}
    len_of = {c.chunk_id: n for c, (_, n) in zip(children, stats, strict=True)}
    cols = f"row_id, {COLUMNS}, f, length, embedding"
    options = " WITH (FREEZE)" if freeze else ""
    with conn.cursor().copy(f"COPY {chunks_table} ({cols}) FROM STDIN{options}") as copy:
        for row_id, c in zip(ids, chunks, strict=True):
            vec = vec_of.get(c.chunk_id)
            copy.write_row(
                (
                    row_id,
                    c.chunk_id,
                    c.doc_id,
                    c.position,
                    c.parent_id,
                    c.is_parent,
                    c.text,
                    Jsonb(c.metadata),
                    Jsonb(flat_metadata(c.metadata)),
                    len_of.get(c.chunk_id),
                    None if vec is None else np.asarray(vec, dtype=np.float32),
                )
            )
    row_of = dict(zip((c.chunk_id for c in chunks), ids, strict=True))
    sql = f"COPY {terms_table} (term, row_id, tf, dl) FROM STDIN{options}"
    with conn.cursor().copy(sql) as copy:
        # COPY's text format written by hand: ~10x faster than a write_row per posting (tens
        # of them per chunk).
        for c, (counts, length) in zip(children, stats, strict=True):
            tail = f"\t{row_of[c.chunk_id]}\t"
            copy.write(
                "".join(f"{_copy_text(t)}{tail}{tf}\t{length}\n" for t, tf in counts.items())
            )


def orphans(conn: Any, chunks_table: str, kb_id: int) -> list[str]:
    """Doc ids with chunks but no document row (a caller that saved between the two: a write
    killed mid-way leaves nothing, being one transaction)."""
    sql = (
        f"SELECT DISTINCT c.doc_id FROM {chunks_table} c WHERE NOT EXISTS "
        "(SELECT 1 FROM documents d WHERE d.kb = %s AND d.doc_id = c.doc_id) ORDER BY 1"
    )
    return [r[0] for r in conn.execute(sql, [kb_id]).fetchall()]


def statistics(conn: Any, chunks_table: str, kb_id: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(stored, actual) BM25 statistics: (searchable chunks, their total length)."""
    stored = conn.execute("SELECT n_children, total_len FROM kbs WHERE id = %s", [kb_id]).fetchone()
    actual = conn.execute(
        f"SELECT count(*), coalesce(sum(length), 0) FROM {chunks_table} WHERE NOT is_parent"
    ).fetchone()
    return (int(stored[0]), int(stored[1])), (int(actual[0]), int(actual[1]))
