"""Knowledge bases as things a user owns: create (with a description), list the ones the caller
may see, rename, share, delete; and the one rule every endpoint asks before it touches one —
may this caller see it (``resolve``).

Two kinds exist side by side:

- **created** over the API (a row in the store): private to its creator until the creator
  (``PATCH /kb/{name}``) or an operator (``ragchat kb share``) shares it. Sharing shows the
  owner's documents to everyone; other people's uploads into it stay theirs, as everywhere.
  Its ``storage`` (where its indexes live) is fixed at creation, so a rename moves nothing and
  conversations bound to it keep working.
- **shared** (no row): the configured samples and everything ``ragchat ingest`` made, visible
  to all as before; each upload into one stays its uploader's. They cannot be renamed or
  deleted over HTTP (the CLI does that).

A knowledge base somebody may not see answers exactly like a missing one (404
``knowledge_base_not_visible``), so names tell nobody what others created. Names are one
namespace without regard to case: "Sailing" finds "sailing", and nobody can create the other.

The configured samples are read-only to people: an upload into one is 403 ``read_only``
(uploads go to a knowledge base of one's own), so nobody's first upload lands in a sample."""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from ragchat.api.errors import ApiError
from ragchat.errors import Conflict, KnowledgeBaseNotFound
from ragchat.store.base import Store
from ragchat.store.rows import KnowledgeBaseRow
from ragchat.vectorstores.names import validate_name

from .access import DocumentAccess

NOT_VISIBLE = "knowledge_base_not_visible"


def not_visible(name: str) -> ApiError:
    return ApiError(
        404,
        NOT_VISIBLE,
        f"The knowledge base {name!r} is not visible to this caller: it does not exist or "
        "holds no document you may see.",
    )


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


class KnowledgeBaseCatalogue:
    """``configured``: the agents config's knowledge bases (name → description);
    ``kb_agents``: the agents a knowledge base may name as its default."""

    def __init__(
        self,
        store: Store,
        access: DocumentAccess,
        configured: dict[str, str],
        kb_agents: Collection[str],
    ) -> None:
        self.store = store
        self.access = access
        self.registry = access.registry
        self.configured = dict(configured)
        self.kb_agents = frozenset(kb_agents)
        self._create_lock = threading.Lock()

    # -- who may see what -----------------------------------------------------------------------
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

    def resolve(self, user_id: str, name: str) -> KnowledgeBaseView:
        """``find`` or 404 ``knowledge_base_not_visible``."""
        found = self.find(user_id, name)
        if found is None:
            raise not_visible(name)
        return found

    def storage_for(self, user_id: str, name: str) -> str | None:
        """Where the knowledge base ``user_id`` calls ``name`` is stored; None when they may
        not see one by that name (``InvalidKnowledgeBaseName`` when no name could be it)."""
        found = self.find(user_id, name)
        return None if found is None else found.storage

    def visible_storages(self, user_id: str) -> list[str]:
        return [v.storage for v in self.visible(user_id)]

    def resolve_all(self, user_id: str, names: Sequence[str]) -> list[KnowledgeBaseView]:
        seen: dict[str, KnowledgeBaseView] = {}
        for name in names:
            view = self.resolve(user_id, name)
            seen.setdefault(view.storage, view)
        return list(seen.values())

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

    def sharers(self, storage: str) -> Collection[str]:
        """``DocumentAccess.sharers``: a shared created knowledge base's owner's uploads are
        everyone's who may see it."""
        rows = self.store.kbs_by_storage([storage])
        row = rows.get(storage)
        if row is None or not row.shared or row.owner_id is None:
            return ()
        return self.access.folders(row.owner_id)

    # -- changes --------------------------------------------------------------------------------
    def _check_agent(self, agent: str | None) -> None:
        if agent is not None and agent not in self.kb_agents:
            known = ", ".join(sorted(self.kb_agents)) or "none is configured"
            raise ApiError(
                400,
                "unknown_agent",
                f"{agent!r} cannot answer over a knowledge base; agents that can: {known}.",
            )

    def _taken(self, name: str) -> bool:
        return self._shared_name(name) is not None

    def create(
        self,
        user_id: str,
        name: str,
        *,
        description: str = "",
        default_agent: str | None = None,
    ) -> KnowledgeBaseView:
        """A new private knowledge base of ``user_id``'s; 409 when the name is taken (by any
        knowledge base, seen or not: names are one namespace)."""
        validate_name(name)
        self._check_agent(default_agent)
        with self._create_lock:
            if self._taken(name):
                raise Conflict(f"a knowledge base named {name!r} already exists")
            row = self.store.create_kb(
                name, user_id, description=description, default_agent=default_agent
            )
        view = self._of_row(row, user_id)
        assert view is not None
        return view

    def for_upload(self, user_id: str, name: str) -> KnowledgeBaseView:
        """Where an upload to ``name`` goes: the knowledge base the caller may see by that
        name, else a new one of theirs (an upload is how most people make one)."""
        found = self.find(user_id, name)
        if found is not None:
            if found.configured and not found.owned:
                raise ApiError(
                    403,
                    "read_only",
                    f"{found.name!r} is a sample knowledge base: it is read-only. Create a "
                    "knowledge base of your own (POST /kb, or upload to a new name) and add your "
                    "documents there.",
                )
            return found
        if self.store.find_kb(name) is not None or self._taken(name):
            raise not_visible(name)  # someone else's
        try:
            return self.create(user_id, name)
        except Conflict:  # created concurrently: by this caller (fine) or another (404)
            return self.resolve(user_id, name)

    def _owned(self, user_id: str, name: str) -> KnowledgeBaseRow:
        view = self.resolve(user_id, name)
        if view.row is None:
            raise ApiError(
                403,
                "forbidden",
                f"{name!r} is a shared knowledge base: an operator manages it with "
                "`ragchat kb` on the server.",
            )
        if not view.owned:
            raise ApiError(403, "forbidden", f"Only the owner of {name!r} can change it.")
        return view.row

    def update(
        self,
        user_id: str,
        name: str,
        *,
        new_name: str | None = None,
        description: str | None = None,
        default_agent: str | None = None,
        clear_default_agent: bool = False,
        shared: bool | None = None,
    ) -> KnowledgeBaseView:
        row = self._owned(user_id, name)
        if new_name is not None and new_name != row.name:
            validate_name(new_name)
            if new_name.lower() != row.storage.lower() and self._taken(new_name):
                raise Conflict(f"a knowledge base named {new_name!r} already exists")
        self._check_agent(default_agent)
        updated = self.store.update_kb(
            row.storage,
            name=new_name,
            description=description,
            default_agent=default_agent,
            clear_default_agent=clear_default_agent,
            shared=shared,
        )
        view = self._of_row(updated, user_id)
        assert view is not None
        return view

    def delete(self, user_id: str, name: str) -> None:
        """The owner's knowledge base with every document in it, anyone's uploads included
        (they were made into something the owner controls)."""
        row = self._owned(user_id, name)
        with contextlib.suppress(KnowledgeBaseNotFound):
            self.registry.remove(row.storage)
        shutil.rmtree(self.access.uploads / row.storage, ignore_errors=True)
        self.store.delete_kb_row(row.storage)
