"""Knowledge bases as things a user owns: create (with a description), list the ones the caller
may see, rename, share, delete; and the one rule every endpoint asks before it touches one —
may this caller see it (``resolve``, over ``tenancy.knowledge_bases``).

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

from ragchat.api.errors import ApiError
from ragchat.errors import Conflict, KnowledgeBaseNotFound
from ragchat.store.base import Store
from ragchat.store.rows import KnowledgeBaseRow
from ragchat.tenancy.documents import DocumentAccess
from ragchat.tenancy.knowledge_bases import KnowledgeBaseView, KnowledgeBaseVisibility
from ragchat.vectorstores.names import validate_name

NOT_VISIBLE = "knowledge_base_not_visible"


def not_visible(name: str) -> ApiError:
    return ApiError(
        404,
        NOT_VISIBLE,
        f"The knowledge base {name!r} is not visible to this caller: it does not exist or "
        "holds no document you may see.",
    )


class KnowledgeBaseCatalogue(KnowledgeBaseVisibility):
    """Who may see what (``tenancy.knowledge_bases``), the 404 for what one may not, and the
    changes people make over HTTP. ``kb_agents``: the agents a knowledge base may name as its
    default."""

    def __init__(
        self,
        store: Store,
        access: DocumentAccess,
        configured: dict[str, str],
        kb_agents: Collection[str],
    ) -> None:
        super().__init__(store, access, configured)
        self.kb_agents = frozenset(kb_agents)
        self._create_lock = threading.Lock()

    # -- who may see what -----------------------------------------------------------------------
    def resolve(self, user_id: str, name: str) -> KnowledgeBaseView:
        """``find`` or 404 ``knowledge_base_not_visible``."""
        found = self.find(user_id, name)
        if found is None:
            raise not_visible(name)
        return found

    def resolve_all(self, user_id: str, names: Sequence[str]) -> list[KnowledgeBaseView]:
        seen: dict[str, KnowledgeBaseView] = {}
        for name in names:
            view = self.resolve(user_id, name)
            seen.setdefault(view.storage, view)
        return list(seen.values())

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
