"""The pgvector store: tables in one PostgreSQL schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragchat.embed.base import Embedder
from ragchat.vectorstores.base import Backend, KBInfo, WritableKB
from ragchat.vectorstores.server import ServerStore


class PgVectorStore(ServerStore):
    backend: Backend = "pgvector"

    def _kb_class(self) -> Any:
        from ragchat.vectorstores.pgvector.kb import PgVectorKB

        return PgVectorKB

    def where(self) -> str:
        from ragchat.vectorstores.pgvector.conn import database_url

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
