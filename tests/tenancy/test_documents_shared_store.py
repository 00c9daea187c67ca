"""Private uploads stay private when several server processes share one Qdrant store: each
process reads owners from the store, and a document it has not read yet is not searchable by
anyone but through an allowlist (fail closed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import Settings, VectorStoreSettings
from ragchat.tenancy.documents import DocumentAccess
from ragchat.types import Chunk, ExcludeResolved, Only
from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.registry import KnowledgeBaseRegistry

pytest.importorskip("qdrant_client")


def _add(registry: KnowledgeBaseRegistry, doc: str, path: Path, *, row: bool = True) -> None:
    with registry.writing("kb", create=True) as kb:
        kb.add_chunks([Chunk(f"{doc}_c0", doc, f"notes about {doc}", 0, None, False, {})])
        if row:
            kb.add_document_row(DocumentRow(doc, str(path), "text", doc, str(path), 1, 0, {}, ""))
        kb.save()


def _upload(first: DocumentAccess, uploads: Path, user: str, doc: str) -> None:
    """``user``'s private upload of ``doc``, written through ``first``'s registry."""
    private = uploads / "kb" / user / f"{doc}.txt"
    private.parent.mkdir(parents=True)
    private.write_text("private")
    _add(first.registry, doc, private)


def _found(access: DocumentAccess, user: str, query: str) -> list[str]:
    """Doc ids a search by ``user`` returns through ``access``'s visibility filter."""
    registry = access.registry
    visible = ExcludeResolved(lambda base: access.hidden("kb", user, base))
    with registry.reading("kb") as kb:
        hits = kb.bm25_search(query, 10, {"doc_id": visible})
        return sorted({c.doc_id for c in kb.get_chunks([cid for cid, _ in hits])})


@pytest.fixture
def two_processes(tmp_path: Path) -> tuple[DocumentAccess, DocumentAccess, Path]:
    """Two registries over one Qdrant store: what two workers (or machines) each hold."""
    settings = Settings(data_dir=tmp_path, vector_store=VectorStoreSettings(backend="qdrant"))
    uploads = tmp_path / "uploads"
    embedder = HashingEmbedder(dim=32)
    first, second = (
        DocumentAccess(uploads, KnowledgeBaseRegistry(tmp_path / "kb", embedder, settings=settings))
        for _ in range(2)
    )
    _add(first.registry, "shared", tmp_path / "shared.txt")
    assert [v.row.doc_id for v in second.views("kb")] == ["shared"]  # cached before the upload
    return first, second, uploads


def test_an_upload_through_one_process_is_hidden_by_the_other(
    two_processes: tuple[DocumentAccess, DocumentAccess, Path],
) -> None:
    first, second, uploads = two_processes
    _upload(first, uploads, "alice", "alices")

    assert second.hidden("kb", "bob") == Only(("shared",))
    assert _found(second, "bob", "notes about alices") == ["shared"]
    assert _found(second, "alice", "notes about alices") == ["alices", "shared"]


def test_another_machines_upload_is_hidden_without_its_folder(
    two_processes: tuple[DocumentAccess, DocumentAccess, Path],
) -> None:
    """The second machine has no ``uploads/kb/alice`` folder: owners come from the store."""
    first, second, uploads = two_processes
    _upload(first, uploads, "alice", "alices")
    shutil.rmtree(uploads)

    assert _found(second, "bob", "notes about alices") == ["shared"]


def test_chunks_without_their_document_row_yet_are_not_searchable(
    two_processes: tuple[DocumentAccess, DocumentAccess, Path],
) -> None:
    """A write caught between its chunks and its document row: the owner is unknown, so the
    document is shown to nobody rather than to everybody."""
    first, second, uploads = two_processes
    _upload(first, uploads, "carol", "carols")
    (uploads / "kb" / "dave").mkdir()  # an upload's folder exists before its first write
    _add(first.registry, "half_written", uploads / "kb" / "dave" / "d.txt", row=False)

    assert _found(second, "bob", "notes about half_written") == ["shared"]
    assert "half_written" not in _found(second, "carol", "notes about half_written")


def test_nothing_private_means_no_filter(
    two_processes: tuple[DocumentAccess, DocumentAccess, Path],
) -> None:
    _, second, _ = two_processes
    assert second.hidden("kb", "bob") == ()
    assert _found(second, "bob", "notes about shared") == ["shared"]
