"""What the server-backed stores (Qdrant, pgvector) share: knowledge bases that check and
repair themselves, opened with the stored vectors' model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragchat.embed.base import Embedder
from ragchat.embed.stored import StoredVectorsOnly
from ragchat.settings import Settings
from ragchat.vectorstores.base import Backend, CheckReport, KBInfo, WritableKB
from ragchat.vectorstores.lock import WriteLock
from ragchat.vectorstores.names import validate_name


class ServerStore:
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
