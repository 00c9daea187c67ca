"""The configured vector store: opens, creates, lists, describes and deletes knowledge bases on
the embedded files or on Qdrant (``Settings.vector_store.backend``). Everything above the index
stage goes through here, so switching backends is a setting, not a code change."""

from __future__ import annotations

from typing import Any, Literal

from ragchat.index.base import Embedder, WritableKB
from ragchat.index.generations import WriteLock
from ragchat.index.kb import KnowledgeBase, validate_name
from ragchat.index.kb_check import CheckReport
from ragchat.settings import Settings

Backend = Literal["embedded", "qdrant"]


def _backend(settings: Settings, backend: Backend | None) -> Backend:
    return backend or settings.vector_store.backend


def open_kb(
    settings: Settings,
    name: str,
    embedder: Embedder,
    *,
    backend: Backend | None = None,
    strict_model: bool = True,
    lock: WriteLock | None = None,
) -> WritableKB:
    """``lock``: ``write_lock``'s, held by the caller for the instance's writes."""
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.qdrant import QdrantKB

        return QdrantKB.open(settings, name, embedder, strict_model=strict_model)
    return KnowledgeBase.open(
        settings.kb_root, name, embedder, strict_model=strict_model, lock=lock
    )


def create_kb(
    settings: Settings,
    name: str,
    embedder: Embedder,
    *,
    backend: Backend | None = None,
    dense_backend: str = "flat",
    lock: WriteLock | None = None,
) -> WritableKB:
    chunking = settings.chunking.model_dump()
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.qdrant import QdrantKB

        return QdrantKB.create(settings, name, embedder, chunking=chunking)
    return KnowledgeBase.create(
        settings.kb_root,
        name,
        embedder,
        dense_backend=dense_backend,
        chunking=chunking,
        lock=lock,
    )


def open_or_create_kb(
    settings: Settings,
    name: str,
    embedder: Embedder,
    *,
    backend: Backend | None = None,
    dense_backend: str = "flat",
    lock: WriteLock | None = None,
) -> WritableKB:
    if name in kb_names(settings, backend=backend):
        return open_kb(settings, name, embedder, backend=backend, lock=lock)
    return create_kb(
        settings, name, embedder, backend=backend, dense_backend=dense_backend, lock=lock
    )


def write_lock(settings: Settings, name: str) -> WriteLock:
    """The lock (not taken yet) every process writing knowledge base ``name`` on this data
    directory takes: the generations' own lock for embedded files; for Qdrant, a lock file
    under ``<data_dir>/locks`` (the server's workers share a machine, not Qdrant's state)."""
    validate_name(name)
    if _backend(settings, None) == "qdrant":
        folder = settings.data_dir / "locks" / f"qdrant-{name}"
    else:
        folder = settings.kb_root / name
    folder.mkdir(parents=True, exist_ok=True)
    return WriteLock(folder)


def kb_names(settings: Settings, *, backend: Backend | None = None) -> list[str]:
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.qdrant import QdrantKB

        return QdrantKB.names(settings)
    return KnowledgeBase.names(settings.kb_root)


def describe_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> dict[str, Any]:
    """Manifest figures without loading a model or an index."""
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.qdrant import QdrantKB

        return QdrantKB.describe(settings, name)
    return KnowledgeBase.describe(settings.kb_root, name)


def delete_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> None:
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.qdrant import QdrantKB

        QdrantKB.delete(settings, name)
        return
    KnowledgeBase.delete(settings.kb_root, name)


def check_kb(
    settings: Settings, name: str, *, deep: bool = True, backend: Backend | None = None
) -> CheckReport:
    """What prevents the knowledge base from opening, without changing anything. ``deep``
    False reads only headers and counts (the health probe)."""
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.migrate import StoredVectorsOnly
        from ragchat.index.qdrant import QdrantKB

        info = QdrantKB.describe(settings, name)
        emb = StoredVectorsOnly(str(info["embedding_model"]), int(info["dim"]))
        report = CheckReport(name, generation=int(info.get("revision") or 0))
        if deep:
            report.problems.extend(QdrantKB.open(settings, name, emb).check())
        return report
    from ragchat.index.kb_check import check

    return check(settings.kb_root, name, deep=deep)


def repair_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> list[str]:
    """Makes the knowledge base consistent again; returns what was done, one line each."""
    if _backend(settings, backend) == "qdrant":
        from ragchat.index.migrate import StoredVectorsOnly
        from ragchat.index.qdrant import QdrantKB

        info = QdrantKB.describe(settings, name)
        emb = StoredVectorsOnly(str(info["embedding_model"]), int(info["dim"]))
        return QdrantKB.open(settings, name, emb).repair()
    from ragchat.index.kb_check import repair

    return repair(settings.kb_root, name)
