"""The embedded store: one folder per knowledge base under ``<data_dir>/kb``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragchat.embed.base import Embedder
from ragchat.vectorstores.base import Backend, CheckReport, KBInfo, WritableKB
from ragchat.vectorstores.embedded.kb import KnowledgeBase
from ragchat.vectorstores.lock import WriteLock
from ragchat.vectorstores.manifest import Manifest
from ragchat.vectorstores.names import validate_name


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
        from ragchat.vectorstores.embedded.check import check

        return check(self.root, name, deep=deep)

    def repair(self, name: str) -> list[str]:
        from ragchat.vectorstores.embedded.check import repair

        return repair(self.root, name)

    def single_process(self) -> str | None:
        return None  # writers take turns through the lock file, readers reopen on commit
