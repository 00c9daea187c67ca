"""Documents and ingested files of a pgvector knowledge base (the ``Catalogue`` protocol), rows
of the shared ``documents`` and ``files`` tables keyed by the knowledge base's id. Writes join
the knowledge base's open transaction, so they commit or vanish with its chunks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg.types.json import Jsonb

from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.pgvector.conn import Session

_DOC_COLUMNS = "doc_id, source, kind, title, file_path, n_children, n_sections, metadata, added_at"


def _row(r: tuple[Any, ...]) -> DocumentRow:
    return DocumentRow(r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), dict(r[7] or {}), r[8])


class PgCatalogue:
    def __init__(self, session: Session, kb_id: int) -> None:
        self._session = session
        self._kb = kb_id

    def _all(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self._session.read() as conn:
            return list(conn.execute(sql, [self._kb, *params]).fetchall())

    def _write(self, sql: str, *params: Any) -> None:
        with self._session.write() as conn:
            conn.execute(sql, [self._kb, *params])

    # -- files -----------------------------------------------------------------------------
    def file_sha(self, path: str) -> str | None:
        found = self._all("SELECT sha256 FROM files WHERE kb = %s AND path = %s", path)
        return str(found[0][0]) if found else None

    def files(self) -> list[tuple[str, str]]:
        return [
            (r[0], r[1])
            for r in self._all("SELECT path, sha256 FROM files WHERE kb = %s ORDER BY path")
        ]

    def paths_with_sha(self, sha256: str) -> list[str]:
        sql = "SELECT path FROM files WHERE kb = %s AND sha256 = %s ORDER BY path"
        return [r[0] for r in self._all(sql, sha256)]

    def record_file(self, path: str, sha256: str, when: str) -> None:
        self._write(
            "INSERT INTO files (kb, path, sha256, ingested_at) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (kb, path) DO UPDATE SET sha256 = EXCLUDED.sha256, "
            "ingested_at = EXCLUDED.ingested_at",
            path,
            sha256,
            when,
        )

    def forget_file(self, path: str) -> None:
        self._write("DELETE FROM files WHERE kb = %s AND path = %s", path)

    # -- documents -------------------------------------------------------------------------
    def insert_document(self, row: DocumentRow) -> None:
        self._write(
            f"INSERT INTO documents (kb, {_DOC_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (kb, doc_id) DO UPDATE "
            "SET source = EXCLUDED.source, kind = EXCLUDED.kind, title = EXCLUDED.title, "
            "file_path = EXCLUDED.file_path, n_children = EXCLUDED.n_children, "
            "n_sections = EXCLUDED.n_sections, metadata = EXCLUDED.metadata, "
            "added_at = EXCLUDED.added_at",
            *row.values(Jsonb),
        )

    def docs_of_file(self, path: str) -> list[str]:
        sql = "SELECT doc_id FROM documents WHERE kb = %s AND file_path = %s ORDER BY doc_id"
        return [r[0] for r in self._all(sql, path)]

    def has_document(self, doc_id: str) -> bool:
        return bool(self._all("SELECT 1 FROM documents WHERE kb = %s AND doc_id = %s", doc_id))

    def known_documents(self, doc_ids: Iterable[str]) -> set[str]:
        ids = list(doc_ids)
        if not ids:
            return set()
        sql = "SELECT doc_id FROM documents WHERE kb = %s AND doc_id = ANY(%s)"
        return {r[0] for r in self._all(sql, ids)}

    def documents(self) -> list[DocumentRow]:
        sql = f"SELECT {_DOC_COLUMNS} FROM documents WHERE kb = %s ORDER BY added_at, source"
        return [_row(r) for r in self._all(sql)]

    def set_document_file(self, doc_id: str, path: str) -> None:
        with self._session.write() as conn:
            conn.execute(
                "UPDATE documents SET file_path = %s WHERE kb = %s AND doc_id = %s",
                [path, self._kb, doc_id],
            )

    def delete_document_row(self, doc_id: str) -> None:
        self._write("DELETE FROM documents WHERE kb = %s AND doc_id = %s", doc_id)

    def document_count(self) -> int:
        return int(self._all("SELECT count(*) FROM documents WHERE kb = %s")[0][0])
