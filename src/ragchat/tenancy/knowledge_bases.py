"""Which knowledge bases a person may see, and what they call each one.

Two kinds exist side by side:

- **created** over the API (a row in the chat database): private to its creator until the
  creator or an operator shares it. Sharing shows the owner's documents to everyone; other
  people's uploads into it stay theirs, as everywhere. Its ``storage`` (where its indexes live)
  is fixed at creation, so a rename moves nothing.
- **shared** (no row): the configured samples and everything ``ragchat ingest`` made, visible
  to everyone who may see a document in it (the samples always).

Names are one namespace without regard to case: "Sailing" finds "sailing"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ragchat.store.base import Store
from ragchat.store.rows import KnowledgeBaseRow
from ragchat.tenancy.documents import DocumentAccess
from ragchat.vectorstores.names import validate_name


@dataclass(frozen=True)
class KnowledgeBaseView:
    """A knowledge base as one caller sees it."""

    name: str  # what the caller calls it
    storage: str  # where its indexes live (the name every lower layer uses)
    description: str = ""
    owned: bool = False  # the caller created it
    shared: bool = True  # visible to everyone
    configured: bool = False  # declared in the agents config (a sample)
    default_agent: str | None = None
    created_at: datetime | None = None
    row: KnowledgeBaseRow | None = None


class KnowledgeBaseVisibility:
    """``configured``: the agents config's knowledge bases (name → description)."""

    def __init__(self, store: Store, access: DocumentAccess, configured: dict[str, str]) -> None:
        self.store = store
        self.access = access
        self.registry = access.registry
        self.configured = dict(configured)

    @staticmethod
    def _of_row(row: KnowledgeBaseRow, user_id: str) -> KnowledgeBaseView | None:
        owned = row.owner_id is not None and row.owner_id == user_id
        if not (owned or row.shared):
            return None
        return KnowledgeBaseView(
            name=row.name,
            storage=row.storage,
            description=row.description,
            owned=owned,
            shared=row.shared,
            default_agent=row.default_agent,
            created_at=row.created_at,
            row=row,
        )

    def _shared(self, name: str) -> KnowledgeBaseView:
        return KnowledgeBaseView(
            name=name,
            storage=name,
            description=self.configured.get(name, ""),
            configured=name in self.configured,
        )

    def _shared_name(self, name: str) -> str | None:
        """The configured or stored knowledge base called ``name`` in any case."""
        if name in self.configured or name in self.registry.names():
            return name
        key = name.lower()
        return next(
            (n for n in (*self.configured, *self.registry.names()) if n.lower() == key), None
        )

    def find(self, user_id: str, name: str) -> KnowledgeBaseView | None:
        """The knowledge base ``user_id`` knows as ``name`` (in any case), or None."""
        validate_name(name)
        row = self.store.find_kb(name)
        if row is not None:
            return self._of_row(row, user_id)
        actual = self._shared_name(name)
        if actual is None:
            return None
        if actual in self.configured:
            return self._shared(actual)
        return self._shared(actual) if self.access.kb_visible(user_id, actual) else None

    def storage_for(self, user_id: str, name: str) -> str | None:
        """Where the knowledge base ``user_id`` calls ``name`` is stored; None when they may
        not see one by that name (``InvalidKnowledgeBaseName`` when no name could be it)."""
        found = self.find(user_id, name)
        return None if found is None else found.storage

    def visible_storages(self, user_id: str) -> list[str]:
        return [v.storage for v in self.visible(user_id)]

    def visible(self, user_id: str) -> list[KnowledgeBaseView]:
        """Every knowledge base the caller may see, created ones first by name, then shared
        ones that hold a document the caller may see (or are configured)."""
        rows = self.store.list_kbs()
        out = [v for r in rows if (v := self._of_row(r, user_id)) is not None]
        taken = {r.storage for r in rows} | {r.name for r in rows}
        for name in sorted(set(self.registry.names()) | set(self.configured)):
            if name in taken:
                continue
            if name in self.configured or self.access.kb_visible(user_id, name):
                out.append(self._shared(name))
        return out

    def name_of(self, user_id: str, storage: str) -> str:
        """What the caller calls the knowledge base stored as ``storage`` now (its new name
        after a rename); the storage name when there is no row."""
        names = self.names_by_storage(user_id, [storage])
        return names[0] if names else storage

    def names_by_storage(self, user_id: str, storages: Sequence[str]) -> list[str]:
        """What the caller calls each of ``storages`` now (a renamed one by its new name);
        created ones the caller may no longer see are left out."""
        rows = self.store.kbs_by_storage(storages)
        out = []
        for storage in storages:
            row = rows.get(storage)
            if row is None:
                out.append(storage)
            elif (view := self._of_row(row, user_id)) is not None:
                out.append(view.name)
        return out
