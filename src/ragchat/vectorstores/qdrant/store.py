"""The Qdrant store: one collection per knowledge base."""

from __future__ import annotations

from typing import Any

from ragchat.vectorstores.base import Backend, KBInfo
from ragchat.vectorstores.server import ServerStore


class QdrantStore(ServerStore):
    backend: Backend = "qdrant"

    def _kb_class(self) -> Any:
        from ragchat.vectorstores.qdrant.kb import QdrantKB

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
        from ragchat.vectorstores.qdrant.conn import collection_name

        manifest = self._kb_class().read_manifest(self.settings, name)
        return KBInfo(manifest, f"{self.where()} collection {collection_name(self.settings, name)}")
