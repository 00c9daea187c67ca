"""The configured vector store: one ``VectorStore`` object per backend (embedded files, Qdrant,
pgvector), built once from settings (``vector_store``), that opens, creates, lists, describes,
checks, repairs and deletes knowledge bases. Everything above the index stage goes through it,
so switching backends is a setting, not a code change, and no module compares backend names.

The module-level functions (``open_kb``, ``kb_names``...) are shorthands for
``vector_store(settings, backend).<method>``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ragchat.index.base import Embedder, WritableKB
from ragchat.index.generations import WriteLock
from ragchat.index.kb import KnowledgeBase, validate_name
from ragchat.index.kb_check import CheckReport
from ragchat.index.manifest import Manifest
from ragchat.settings import Settings

Backend = Literal["embedded", "qdrant", "pgvector"]
BACKENDS: tuple[Backend, ...] = ("embedded", "qdrant", "pgvector")


@dataclass(frozen=True)
class KBInfo:
    """What ``describe`` knows without loading a model or an index."""

    manifest: Manifest
    location: str  # a folder, a Qdrant collection, or a PostgreSQL schema
    bytes_on_disk: int | None = None
    generation: int | None = None  # embedded only

    def as_dict(self) -> dict[str, Any]:
        """Flat figures for tables and JSON (``kb stats``)."""
        out: dict[str, Any] = self.manifest.model_dump()
        out["location"] = self.location
        if self.bytes_on_disk is not None:
            out["bytes_on_disk"] = self.bytes_on_disk
        if self.generation is not None:
            out["generation"] = self.generation
        return out


class VectorStore(Protocol):
    backend: Backend
    # True when every instance reads the store's current state (a server shared by processes
    # and machines): nothing to reopen, no snapshot, and visibility filters fail closed.
    shared: bool

    def open(
        self,
        name: str,
        embedder: Embedder,
        *,
        strict_model: bool = True,
        lock: WriteLock | None = None,
    ) -> WritableKB: ...

    def create(
        self,
        name: str,
        embedder: Embedder,
        *,
        dense_backend: str = "flat",
        chunking: Mapping[str, Any] | None = None,
        lock: WriteLock | None = None,
    ) -> WritableKB: ...

    def names(self) -> list[str]: ...

    def where(self) -> str:
        """Where its knowledge bases live, for people (a folder, a server, a schema)."""
        ...

    def describe(self, name: str) -> KBInfo: ...

    def delete(self, name: str) -> None: ...

    def write_lock(self, name: str) -> WriteLock:
        """The lock (not taken yet) every writer of ``name`` on this machine takes."""
        ...

    def check(self, name: str, *, deep: bool = True) -> CheckReport:
        """What prevents the knowledge base from opening, without changing anything. ``deep``
        False reads only headers and counts (the health probe)."""
        ...

    def repair(self, name: str) -> list[str]:
        """Makes the knowledge base consistent again; returns what was done, one line each."""
        ...

    def single_process(self) -> str | None:
        """Why only one process may open this store, with what to do instead (None: any
        number of processes can)."""
        ...


@runtime_checkable
class LoadsInOneWrite(Protocol):
    """A store that can fill a new knowledge base in one write committed by its ``save``,
    building its indexes once at the end (``kb migrate``'s bulk load): a kill before that
    leaves nothing, so the copy needs no resuming."""

    def create_staged(
        self, name: str, embedder: Embedder, *, chunking: Mapping[str, Any] | None = None
    ) -> WritableKB: ...


class EmbeddedStore:
    backend: Backend = "embedded"
    shared = False

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def open(
        self,
        name: str,
        embedder: Embedder,
        *,
        strict_model: bool = True,
        lock: WriteLock | None = None,
    ) -> WritableKB:
        return KnowledgeBase.open(self.root, name, embedder, strict_model=strict_model, lock=lock)

    def create(
        self,
        name: str,
        embedder: Embedder,
        *,
        dense_backend: str = "flat",
        chunking: Mapping[str, Any] | None = None,
        lock: WriteLock | None = None,
    ) -> WritableKB:
        return KnowledgeBase.create(
            self.root, name, embedder, dense_backend=dense_backend, chunking=chunking, lock=lock
        )

    def names(self) -> list[str]:
        return KnowledgeBase.names(self.root)

    def where(self) -> str:
        return str(self.root)

    def describe(self, name: str) -> KBInfo:
        info = KnowledgeBase.describe(self.root, name)
        return KBInfo(
            Manifest.model_validate({k: v for k, v in info.items() if k in Manifest.model_fields}),
            str(info["path"]),
            int(info["bytes_on_disk"]),
            int(info["generation"]),
        )

    def delete(self, name: str) -> None:
        KnowledgeBase.delete(self.root, name)

    def write_lock(self, name: str) -> WriteLock:
        folder = self.root / validate_name(name)
        folder.mkdir(parents=True, exist_ok=True)
        return WriteLock(folder)

    def check(self, name: str, *, deep: bool = True) -> CheckReport:
        from ragchat.index.kb_check import check

        return check(self.root, name, deep=deep)

    def repair(self, name: str) -> list[str]:
        from ragchat.index.kb_check import repair

        return repair(self.root, name)

    def single_process(self) -> str | None:
        return None  # writers take turns through the lock file, readers reopen on commit


class _ServerStore:
    """Shared by Qdrant and pgvector: a store whose knowledge bases check and repair
    themselves, opened with the stored vectors' model (nothing is embedded)."""

    shared = True

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _kb_class(self) -> Any:
        raise NotImplementedError

    def open(
        self,
        name: str,
        embedder: Embedder,
        *,
        strict_model: bool = True,
        lock: WriteLock | None = None,
    ) -> WritableKB:
        kb: WritableKB = self._kb_class().open(
            self.settings, name, embedder, strict_model=strict_model
        )
        return kb

    def create(
        self,
        name: str,
        embedder: Embedder,
        *,
        dense_backend: str = "flat",
        chunking: Mapping[str, Any] | None = None,
        lock: WriteLock | None = None,
    ) -> WritableKB:
        kb: WritableKB = self._kb_class().create(self.settings, name, embedder, chunking=chunking)
        return kb

    def names(self) -> list[str]:
        return list(self._kb_class().names(self.settings))

    def delete(self, name: str) -> None:
        self._kb_class().delete(self.settings, name)

    def write_lock(self, name: str) -> WriteLock:
        """A lock file under ``<data_dir>/locks``: it orders this machine's writers (the
        store itself orders writers across machines where it can: pgvector's row lock)."""
        folder = self.settings.data_dir / "locks" / f"{self.backend}-{validate_name(name)}"
        folder.mkdir(parents=True, exist_ok=True)
        return WriteLock(folder)

    backend: Backend

    def _open_stored(self, name: str) -> Any:
        from ragchat.index.migrate import StoredVectorsOnly

        manifest = self.describe(name).manifest
        emb = StoredVectorsOnly(manifest.embedding_model, manifest.dim)
        return self._kb_class().open(self.settings, name, emb)

    def describe(self, name: str) -> KBInfo:
        raise NotImplementedError

    def check(self, name: str, *, deep: bool = True) -> CheckReport:
        report = CheckReport(name, generation=self.describe(name).manifest.revision)
        if deep:
            kb = self._open_stored(name)
            try:
                report.problems.extend(kb.check())
            finally:
                kb.close()
        return report

    def repair(self, name: str) -> list[str]:
        kb = self._open_stored(name)
        try:
            return list(kb.repair())
        finally:
            kb.close()

    def single_process(self) -> str | None:
        return None


class QdrantStore(_ServerStore):
    backend: Backend = "qdrant"

    def _kb_class(self) -> Any:
        from ragchat.index.qdrant import QdrantKB

        return QdrantKB

    def where(self) -> str:
        return self.settings.vector_store.url or str(self.settings.qdrant_path)

    def single_process(self) -> str | None:
        if self.settings.vector_store.url:
            return None
        return (
            f"Qdrant's local mode ({self.settings.qdrant_path}): qdrant-client locks that "
            "folder to one process. Run a Qdrant server and set RAGCHAT_VECTOR_STORE__URL, "
            "use the embedded or pgvector store"
        )

    def describe(self, name: str) -> KBInfo:
        from ragchat.index.qdrant_conn import collection_name

        manifest = self._kb_class().read_manifest(self.settings, name)
        return KBInfo(manifest, f"{self.where()} collection {collection_name(self.settings, name)}")


class PgVectorStore(_ServerStore):
    backend: Backend = "pgvector"

    def _kb_class(self) -> Any:
        from ragchat.index.pgvector import PgVectorKB

        return PgVectorKB

    def where(self) -> str:
        from ragchat.index.pg_conn import database_url

        url = database_url(self.settings)
        host = url.partition("@")[2] or url.partition("://")[2]  # never the password
        return f"PostgreSQL {host}, schema {self.settings.vector_store.pg_schema}"

    def describe(self, name: str) -> KBInfo:
        cls = self._kb_class()
        manifest = cls.read_manifest(self.settings, name)
        return KBInfo(manifest, self.where(), cls.size_on_disk(self.settings, name))

    def create_staged(
        self, name: str, embedder: Embedder, *, chunking: Mapping[str, Any] | None = None
    ) -> WritableKB:
        """``LoadsInOneWrite``: see ``PgVectorKB.create_staged``."""
        kb: WritableKB = self._kb_class().create_staged(
            self.settings, name, embedder, chunking=chunking
        )
        return kb


def vector_store(settings: Settings, backend: Backend | None = None) -> VectorStore:
    """The store of ``backend`` (default: the configured one)."""
    chosen = backend or settings.vector_store.backend
    if chosen == "qdrant":
        return QdrantStore(settings)
    if chosen == "pgvector":
        return PgVectorStore(settings)
    return EmbeddedStore(settings.kb_root)


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
