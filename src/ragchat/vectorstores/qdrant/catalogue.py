"""Documents, ingested files and the manifest of a Qdrant knowledge base, kept as payload-only
points of its own collection: every worker and machine reads the same catalogue, and deleting
the collection deletes all of it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.manifest import Manifest
from ragchat.vectorstores.qdrant.conn import DOCUMENT, FILE, MANIFEST, kind_is, models, point_id

_PAGE = 512


def scroll(client: Any, collection: str, flt: Any, *, vectors: bool = False) -> Iterator[Any]:
    """Every point matching ``flt``, page by page."""
    offset = None
    while True:
        points, offset = client.scroll(
            collection, scroll_filter=flt, limit=_PAGE, offset=offset, with_vectors=vectors
        )
        yield from points
        if offset is None:
            return


def _match(key: str, value: Any) -> Any:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


class QdrantCatalogue:
    """The ``Catalogue`` protocol over one collection."""

    def __init__(self, client: Any, collection: str) -> None:
        self._client = client
        self._collection = collection

    def _put(self, kind: str, key: str, payload: dict[str, Any]) -> None:
        point = models.PointStruct(id=point_id(kind, key), vector={}, payload=payload)
        self._client.upsert(self._collection, [point], wait=True)

    def _find(self, *conditions: Any) -> list[Any]:
        return list(scroll(self._client, self._collection, models.Filter(must=list(conditions))))

    # -- files -----------------------------------------------------------------------------
    def file_sha(self, path: str) -> str | None:
        found = self._client.retrieve(self._collection, [point_id(FILE, path)])
        return str(found[0].payload["sha256"]) if found else None

    def files(self) -> list[tuple[str, str]]:
        return [(p.payload["path"], p.payload["sha256"]) for p in self._find(kind_is(FILE))]

    def paths_with_sha(self, sha256: str) -> list[str]:
        return sorted(
            p.payload["path"] for p in self._find(kind_is(FILE), _match("sha256", sha256))
        )

    def record_file(self, path: str, sha256: str, when: str) -> None:
        payload = {"kind": FILE, "path": path, "sha256": sha256, "ingested_at": when}
        self._put(FILE, path, payload)

    def forget_file(self, path: str) -> None:
        self._client.delete(self._collection, [point_id(FILE, path)], wait=True)

    # -- documents -------------------------------------------------------------------------
    def insert_document(self, row: DocumentRow) -> None:
        payload = {
            "kind": DOCUMENT,
            "doc_id": row.doc_id,
            "source": row.source,
            "doc_kind": row.kind,
            "title": row.title,
            "file_path": row.file_path,
            "n_children": row.n_children,
            "n_sections": row.n_sections,
            "metadata": row.metadata,
            "added_at": row.added_at,
        }
        self._put(DOCUMENT, row.doc_id, payload)

    def docs_of_file(self, path: str) -> list[str]:
        found = self._find(kind_is(DOCUMENT), _match("file_path", path))
        return sorted(p.payload["doc_id"] for p in found)

    def has_document(self, doc_id: str) -> bool:
        return bool(self._client.retrieve(self._collection, [point_id(DOCUMENT, doc_id)]))

    def known_documents(self, doc_ids: Iterable[str]) -> set[str]:
        ids = list(doc_ids)
        found: set[str] = set()
        for i in range(0, len(ids), _PAGE):
            part = [point_id(DOCUMENT, d) for d in ids[i : i + _PAGE]]
            found.update(p.payload["doc_id"] for p in self._client.retrieve(self._collection, part))
        return found

    def documents(self) -> list[DocumentRow]:
        rows = [
            DocumentRow(
                p["doc_id"],
                p["source"],
                p["doc_kind"],
                p["title"],
                p.get("file_path"),
                int(p["n_children"]),
                int(p["n_sections"]),
                dict(p.get("metadata") or {}),
                p["added_at"],
            )
            for p in (q.payload for q in self._find(kind_is(DOCUMENT)))
        ]
        return sorted(rows, key=lambda r: (r.added_at, r.source))

    def set_document_file(self, doc_id: str, path: str) -> None:
        self._client.set_payload(
            self._collection, {"file_path": path}, points=[point_id(DOCUMENT, doc_id)], wait=True
        )

    def delete_document_row(self, doc_id: str) -> None:
        self._client.delete(self._collection, [point_id(DOCUMENT, doc_id)], wait=True)

    def document_count(self) -> int:
        return self.count(DOCUMENT)

    def count(self, kind: str) -> int:
        flt = models.Filter(must=[kind_is(kind)])
        return int(self._client.count(self._collection, count_filter=flt, exact=True).count)

    # -- manifest --------------------------------------------------------------------------
    def manifest(self) -> Manifest | None:
        found = self._client.retrieve(self._collection, [point_id(MANIFEST, MANIFEST)])
        return Manifest.model_validate(found[0].payload["manifest"]) if found else None

    def save_manifest(self, manifest: Manifest) -> None:
        self._put(MANIFEST, MANIFEST, {"kind": MANIFEST, "manifest": manifest.model_dump()})
