"""Who may see which document of a knowledge base.

Ownership is the upload folder: a file under ``<data_dir>/uploads/<kb>/<user>/`` belongs to that
user; files from anywhere else (the bundled samples, ``ragchat ingest``) are shared. A document
is identified by the SHA-256 of its bytes, so two people uploading the same file share one
document: its *sources* are the file it was first ingested from plus every other recorded file
with the same bytes, and each source contributes an owner. A document is visible to a user when
one of its sources is shared or theirs; everyone else's uploads are hidden — from listings, from
the passage endpoint and from retrieval, so one user's private file never grounds another
user's answer. Sharing stays invisible too: a user who uploaded bytes someone else uploaded
first sees the document under the name of their own copy (``DocumentView.label_for``).

A person's uploads are those in their own folder and in the folders of the anonymous
identities their account claimed at sign-in (``DocumentAccess.folders``): claiming moves no
file. Both that and sharing (a shared created knowledge base shows its owner's uploads to
everyone who may see it) are read from the chat database given at construction."""

from __future__ import annotations

import re
import threading
import unicodedata
import weakref
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ragchat.errors import KnowledgeBaseNotFound
from ragchat.settings import Settings
from ragchat.store.base import Store
from ragchat.types import DocumentLabel, Only
from ragchat.vectorstores.base import DocumentRow, WritableKB
from ragchat.vectorstores.names import validate_name
from ragchat.vectorstores.registry import KnowledgeBaseRegistry

_REFUSED = re.compile(r'[<>:"/\\|?*]+')
_MAX_NAME_BYTES = 200  # file systems allow 255; the upload's temporary name adds a few
_USER_FOLDER = re.compile(r"[A-Za-z0-9_-]{1,100}")

Owners = frozenset[str | None]  # None = shared
Folders = frozenset[str]  # one person's upload folders


def uploads_dir(settings: Settings) -> Path:
    return (Path(settings.data_dir) / "uploads").resolve()


def safe_filename(name: str) -> str:
    """The name an upload is saved (and listed, and cited) under: the client's own name,
    accents, dashes and all ("Règlement du club – été 2026.md"), without any folder part,
    control or invisible format characters, or the characters file systems refuse
    (``<>:"/\\|?*``); no leading dot; at most 120 characters and 200 bytes (the end kept: it
    holds the type)."""
    base = Path(unicodedata.normalize("NFC", name).replace("\\", "/")).name
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = _REFUSED.sub("_", base).strip(" .")[-120:]
    while len(base.encode("utf-8")) > _MAX_NAME_BYTES:
        base = base[1:]
    return base.lstrip(" .") or "upload"


def user_folder(user_id: str) -> str:
    """The user's upload folder name (the id itself when it is filesystem-safe)."""
    return user_id if _USER_FOLDER.fullmatch(user_id) else safe_filename(user_id)


def foreign_upload(path: Path, kb: str) -> Path | None:
    """What follows ``uploads/<kb>/`` in an upload recorded by a server with another data
    directory (a shared store, written through another machine): its owner must still be
    known there, or the upload would read as shared with everyone. Fails closed: any file
    under such a path counts as someone's upload."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] == "uploads" and parts[i] == kb:
            return Path(*parts[i + 1 :])
    return None


@dataclass(frozen=True)
class DocumentView:
    row: DocumentRow
    owners: Owners
    sources: tuple[str, ...]  # file paths holding these bytes
    source_owners: tuple[str | None, ...] = ()  # owner of each source (None = shared)
    recorded_owner: str | None = None  # owner of the file the row's name comes from

    @property
    def shared(self) -> bool:
        return None in self.owners or not self.owners

    def visible_to(self, mine: Folders) -> bool:
        return self.shared or not mine.isdisjoint(self.owners)

    def label_for(self, mine: Folders) -> DocumentLabel | None:
        """The person's own name for the document when its recorded name is another user's
        upload (None: the recorded name is theirs or shared, show it as it is)."""
        if self.recorded_owner is None or self.recorded_owner in mine:
            return None
        owned = dict(zip(self.sources, self.source_owners, strict=False))
        copy = next((p for p, o in owned.items() if o in mine), None)
        if copy is None:
            copy = next((p for p, o in owned.items() if o is None), None)
        if copy is None:
            return None
        recorded, sep, fragment = self.row.source.partition("#")
        title = self.row.title
        if title in (Path(recorded).stem, Path(recorded).name):
            title = Path(copy).stem
        return DocumentLabel(copy + sep + fragment, title)

    @property
    def file_name(self) -> str:
        return Path(self.row.source.partition("#")[0]).name

    def shown_to(self, mine: Folders) -> tuple[str, str]:
        """(file name, title) as the person with these folders sees them in listings."""
        label = self.label_for(mine)
        if label is None:
            return self.file_name, self.row.title
        return Path(label.source.partition("#")[0]).name, label.title


class DocumentVisibility(Protocol):
    """What a search asks about one person (the retriever's view of ``DocumentAccess``)."""

    def hidden(self, kb: str, user_id: str, base: Any = None) -> Sequence[str] | Only:
        """Ids of the documents of ``kb`` (in the state ``base`` being searched) the person may
        not see."""
        ...

    def labels(self, kb: str, user_id: str) -> Mapping[str, DocumentLabel]:
        """Doc id → the person's own name for a document someone else uploaded first."""
        ...


class DocumentAccess:
    """``store``: the chat database, which records the identities an account claimed (their
    uploads are its) and which created knowledge bases are shared; None (tests of one
    process's files): nobody claimed anything and nothing is shared that way."""

    def __init__(
        self, uploads: Path, registry: KnowledgeBaseRegistry, store: Store | None = None
    ) -> None:
        self.uploads = uploads.resolve()
        self.registry = registry
        self.store = store
        # Per live KnowledgeBase instance and its version: an embedded write swaps in a new
        # instance; a shared store's instance lives on while other processes write to it, so
        # its entries are also keyed by the store's version (revision and count).
        self._views: weakref.WeakKeyDictionary[WritableKB, tuple[object, list[DocumentView]]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def folders(self, user_id: str) -> Folders:
        """The person's upload folders: their own and those of the identities they claimed."""
        claimed = self.store.merged_ids(user_id) if self.store is not None else ()
        return frozenset([user_folder(user_id), *map(user_folder, claimed)])

    def sharers(self, storage: str) -> Collection[str]:
        """The upload folders whose files in ``storage`` everyone who may see it may read: its
        owner's, once the owner shared a knowledge base they created."""
        if self.store is None:
            return ()
        row = self.store.kbs_by_storage([storage]).get(storage)
        if row is None or not row.shared or row.owner_id is None:
            return ()
        return self.folders(row.owner_id)

    def owner_of_path(self, kb: str, path: str | None) -> str | None:
        if not path:
            return None
        try:
            rel = Path(path).resolve().relative_to(self.uploads / kb)
        except ValueError:
            found = foreign_upload(Path(path), kb)
            if found is None:
                return None
            rel = found
        return rel.parts[0] if len(rel.parts) > 1 else None

    def views(self, kb: str, base: WritableKB | None = None) -> list[DocumentView]:
        """Every document of ``kb`` with its owners and source files."""
        if base is None:
            with self.registry.reading(kb) as live:
                return self.views(kb, live)
        version = base.version() if self.registry.remote else None
        with self._lock:
            cached = self._views.get(base)
        if cached is not None and cached[0] == version:
            return cached[1]
        by_sha: defaultdict[str, list[str]] = defaultdict(list)
        for path, sha in base.catalogue.files():
            by_sha[sha].append(path)
        views = []
        for row in base.catalogue.documents():
            sources = dict.fromkeys(([row.file_path] if row.file_path else []) + by_sha[row.doc_id])
            each = tuple(self.owner_of_path(kb, p) for p in sources)
            owners = frozenset(each) or frozenset({None})
            recorded = self.owner_of_path(kb, row.source.partition("#")[0])
            views.append(DocumentView(row, owners, tuple(sources), each, recorded))
        with self._lock:
            self._views[base] = (version, views)
        return views

    def visible(self, user_id: str, kb: str) -> list[DocumentView]:
        """Shared documents, the caller's own uploads and those of a shared knowledge base's
        owner."""
        return self.filter(user_id, kb, self.views(kb))

    def filter(self, user_id: str, kb: str, views: Sequence[DocumentView]) -> list[DocumentView]:
        sharers = frozenset(self.sharers(kb))
        mine = self.folders(user_id)
        return [v for v in views if v.visible_to(mine) or v.owners & sharers]

    def kb_visible(self, user_id: str, kb: str) -> bool:
        """Whether ``kb`` exists and holds a document ``user_id`` may see (else asking it
        would only ever say "not found" without saying why)."""
        if validate_name(kb) not in self.registry.names():
            return False
        try:
            return bool(self.visible(user_id, kb))
        except KnowledgeBaseNotFound:
            return False

    def _others_uploaded(
        self, kb: str, user_id: str, views: list[DocumentView] | None = None
    ) -> bool:
        """Whether anyone but ``user_id`` has an upload folder in ``kb`` (a directory listing:
        the usual single-user case answers without reading the knowledge base) or, with a
        shared store's ``views``, owns one of its documents."""
        mine = self.folders(user_id)
        try:
            if any(p.is_dir() and p.name not in mine for p in (self.uploads / kb).iterdir()):
                return True
        except (FileNotFoundError, NotADirectoryError):
            pass
        # Another machine's uploads have no folder here: a shared store says who owns what.
        return views is not None and any(
            o is not None and o not in mine for v in views for o in v.owners
        )

    def _shared_views(self, kb: str) -> list[DocumentView] | None:
        """A shared store's views, read once per call (each read asks the store's version)."""
        return self.views(kb) if self.registry.remote else None

    def labels(self, kb: str, user_id: str) -> Mapping[str, DocumentLabel]:
        """Doc id → the user's own name for documents first uploaded by someone else."""
        views = self._shared_views(kb)
        if not self._others_uploaded(kb, user_id, views):
            return {}
        found = {}
        mine = self.folders(user_id)
        for view in self.filter(user_id, kb, views if views is not None else self.views(kb)):
            if (label := view.label_for(mine)) is not None:
                found[view.row.doc_id] = label
        return found

    def hidden(self, kb: str, user_id: str, base: WritableKB | None = None) -> Sequence[str] | Only:
        """Document ids of ``kb`` (of ``base``, the state being searched, when given) that
        ``user_id`` may not see: other people's uploads.

        Answers from the folder listing alone in the usual case where nobody else has uploaded
        anything to it. Listing after ``base`` was published is what makes that safe: a
        document's upload folder exists before the document is committed."""
        views = self._shared_views(kb)
        if not self._others_uploaded(kb, user_id, views):
            return ()
        if views is not None:
            # A shared store has no snapshot, and another process may be writing a document
            # this one has not read yet (its chunks are searchable before its document row):
            # fail closed, only what is known to be visible passes.
            return Only(tuple(v.row.doc_id for v in self.filter(user_id, kb, views)))
        views = self.views(kb, base)
        seen = {v.row.doc_id for v in self.filter(user_id, kb, views)}
        return tuple(v.row.doc_id for v in views if v.row.doc_id not in seen)
