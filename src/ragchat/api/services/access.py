"""Who may see which document of a knowledge base.

Ownership is the upload folder: a file under ``<data_dir>/uploads/<kb>/<user>/`` belongs to that
user; files from anywhere else (the bundled samples, ``ragchat ingest``) are shared. A document
is identified by the SHA-256 of its bytes, so two people uploading the same file share one
document: its *sources* are the file it was first ingested from plus every other recorded file
with the same bytes, and each source contributes an owner. A document is visible to a user when
one of its sources is shared or theirs; everyone else's uploads are hidden — from listings, from
the passage endpoint and from retrieval, so one user's private file never grounds another
user's answer."""

from __future__ import annotations

import re
import threading
import weakref
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragchat.index.chunkstore import DocumentRow
from ragchat.index.kb import KnowledgeBase
from ragchat.settings import Settings

from .kbs import KnowledgeBaseRegistry

_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")
_USER_FOLDER = re.compile(r"[A-Za-z0-9_-]{1,100}")

Owners = frozenset[str | None]  # None = shared


def uploads_dir(settings: Settings) -> Path:
    return (Path(settings.data_dir) / "uploads").resolve()


def safe_filename(name: str) -> str:
    base = _UNSAFE.sub("_", Path(name.replace("\\", "/")).name).strip(" .")
    return base[-120:] or "upload"


def user_folder(user_id: str) -> str:
    """The user's upload folder name (the id itself when it is filesystem-safe)."""
    return user_id if _USER_FOLDER.fullmatch(user_id) else safe_filename(user_id)


@dataclass(frozen=True)
class DocumentView:
    row: DocumentRow
    owners: Owners
    sources: tuple[str, ...]  # file paths holding these bytes

    @property
    def shared(self) -> bool:
        return None in self.owners or not self.owners

    def visible_to(self, user_id: str) -> bool:
        return self.shared or user_folder(user_id) in self.owners


class DocumentAccess:
    def __init__(self, uploads: Path, registry: KnowledgeBaseRegistry) -> None:
        self.uploads = uploads.resolve()
        self.registry = registry
        # Per live KnowledgeBase instance: every write swaps in a new instance, so an entry can
        # never be stale, and it goes away with the instance.
        self._views: weakref.WeakKeyDictionary[KnowledgeBase, list[DocumentView]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def owner_of_path(self, kb: str, path: str | None) -> str | None:
        if not path:
            return None
        try:
            rel = Path(path).resolve().relative_to(self.uploads / kb)
        except ValueError:
            return None
        return rel.parts[0] if len(rel.parts) > 1 else None

    def views(self, kb: str, base: KnowledgeBase | None = None) -> list[DocumentView]:
        """Every document of ``kb`` with its owners and source files."""
        if base is None:
            with self.registry.reading(kb) as live:
                return self.views(kb, live)
        with self._lock:
            cached = self._views.get(base)
        if cached is not None:
            return cached
        by_sha: defaultdict[str, list[str]] = defaultdict(list)
        for path, sha in base.store.files():
            by_sha[sha].append(path)
        views = []
        for row in base.store.documents():
            sources = dict.fromkeys(([row.file_path] if row.file_path else []) + by_sha[row.doc_id])
            owners = frozenset(self.owner_of_path(kb, p) for p in sources) or frozenset({None})
            views.append(DocumentView(row, owners, tuple(sources)))
        with self._lock:
            self._views[base] = views
        return views

    def visible(self, user_id: str, kb: str) -> list[DocumentView]:
        """Shared documents and the caller's own uploads."""
        return [v for v in self.views(kb) if v.visible_to(user_id)]

    def hidden(self, kb: str, user_id: str) -> Sequence[str]:
        """Document ids of ``kb`` that ``user_id`` may not see (other people's uploads).

        Answers from the folder listing alone — without reading the knowledge base — in the
        usual case where nobody else has uploaded anything to it."""
        folder = self.uploads / kb
        mine = user_folder(user_id)
        try:
            others = [p for p in folder.iterdir() if p.is_dir() and p.name != mine]
        except (FileNotFoundError, NotADirectoryError):
            return ()
        if not others:
            return ()
        return tuple(v.row.doc_id for v in self.views(kb) if not v.visible_to(user_id))
