"""The configured vector store: one ``VectorStore`` object per backend (embedded files, Qdrant,
pgvector), built once from settings (``vector_store``), that opens, creates, lists, describes,
checks, repairs and deletes knowledge bases. Everything above the index stage goes through it,
so switching backends is a setting, not a code change, and no module compares backend names.

The module-level functions (``open_kb``, ``kb_names``...) are shorthands for
``vector_store(settings, backend).<method>``."""

from __future__ import annotations

from ragchat.embed.base import Embedder
from ragchat.settings import Settings
from ragchat.vectorstores.base import Backend, CheckReport, KBInfo, VectorStore, WritableKB
from ragchat.vectorstores.embedded.store import EmbeddedStore
from ragchat.vectorstores.lock import WriteLock
from ragchat.vectorstores.pgvector.store import PgVectorStore
from ragchat.vectorstores.qdrant.store import QdrantStore


def vector_store(settings: Settings, backend: Backend | None = None) -> VectorStore:
    """The store of ``backend`` (default: the configured one)."""
    chosen = backend or settings.vector_store.backend
    if chosen == "qdrant":
        return QdrantStore(settings)
    if chosen == "pgvector":
        return PgVectorStore(settings)
    return EmbeddedStore(settings.kb_root)


def where_knowledge_bases_live(settings: Settings) -> str:
    """Where this process looks for knowledge bases, as a person can check it."""
    backend = settings.vector_store.backend
    if backend == "embedded":
        return f"the data directory {settings.data_dir.resolve()} (RAGCHAT_DATA_DIR)"
    return f"the {backend} store configured by RAGCHAT_VECTOR_STORE__*"


# -- shorthands --------------------------------------------------------------------------------
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
    store = vector_store(settings, backend)
    return store.open(name, embedder, strict_model=strict_model, lock=lock)


def create_kb(
    settings: Settings,
    name: str,
    embedder: Embedder,
    *,
    backend: Backend | None = None,
    dense_backend: str = "flat",
    lock: WriteLock | None = None,
) -> WritableKB:
    return vector_store(settings, backend).create(
        name,
        embedder,
        dense_backend=dense_backend,
        chunking=settings.chunking.model_dump(),
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
    return vector_store(settings).write_lock(name)


def kb_names(settings: Settings, *, backend: Backend | None = None) -> list[str]:
    return vector_store(settings, backend).names()


def describe_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> KBInfo:
    """Manifest figures without loading a model or an index."""
    return vector_store(settings, backend).describe(name)


def delete_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> None:
    vector_store(settings, backend).delete(name)


def check_kb(
    settings: Settings, name: str, *, deep: bool = True, backend: Backend | None = None
) -> CheckReport:
    return vector_store(settings, backend).check(name, deep=deep)


def repair_kb(settings: Settings, name: str, *, backend: Backend | None = None) -> list[str]:
    return vector_store(settings, backend).repair(name)
