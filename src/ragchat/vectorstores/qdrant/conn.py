"""Shared plumbing of the Qdrant backend: the client for the configured store, collection and
point naming, payload <-> ``Chunk``, and ragchat's search filters as Qdrant filters.

Layout of one knowledge base's collection (``<prefix><name>``): child chunks carry a ``dense``
vector (cosine) and a ``bm25`` sparse vector (IDF applied by Qdrant); parents, documents,
ingested files and the manifest are payload-only points told apart by ``kind``. Point ids are
UUIDv5 of ``kind:key``, so writing the same chunk twice overwrites it (idempotent upserts).
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Mapping
from functools import wraps
from typing import Any

from ragchat.errors import VectorStoreUnavailable
from ragchat.settings import Settings
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores.filters import as_text, check_key, flat_metadata, resolved, values_of
from ragchat.vectorstores.unavailable import guard

try:
    from qdrant_client import QdrantClient, models
except ImportError:  # pragma: no cover - the extra is missing
    QdrantClient = None  # type: ignore[assignment,misc]
    models = None  # type: ignore[assignment]

DENSE = "dense"
SPARSE = "bm25"
CHILD, PARENT, DOCUMENT, FILE, MANIFEST = "child", "parent", "document", "file", "manifest"
_NAMESPACE = uuid.UUID("6f1d7a52-2b7e-4c55-9a53-0c1f3c8e7a11")

_clients: dict[str, QdrantClient] = {}
_clients_lock = threading.Lock()


def point_id(kind: str, key: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{key}"))


def collection_name(settings: Settings, name: str) -> str:
    return f"{settings.vector_store.collection_prefix}{name}"


class _Serialised:
    """qdrant-client's local mode is not thread-safe (plain dicts and one SQLite connection);
    the server searches from worker threads while an upload is ingested, so every call on a
    local client holds one lock. A server client is used as is."""

    def __init__(self, client: QdrantClient) -> None:
        self._client = client
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        @wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)

        return call


def connect(settings: Settings) -> QdrantClient:
    """One client per store and process: a local-mode path can be opened only once (it is
    locked against other processes too)."""
    if QdrantClient is None:
        raise VectorStoreUnavailable(
            "the qdrant vector store needs qdrant-client: pip install 'ragchat[qdrant]'"
        )
    vs = settings.vector_store
    key = vs.url or f"path:{settings.qdrant_path.resolve()}"
    with _clients_lock:
        if key not in _clients:
            try:
                if vs.url:
                    key_value = vs.api_key.get_secret_value() if vs.api_key else None
                    client = QdrantClient(url=vs.url, api_key=key_value, timeout=int(vs.timeout_s))
                else:
                    settings.qdrant_path.mkdir(parents=True, exist_ok=True)
                    local = QdrantClient(path=str(settings.qdrant_path))
                    client = _Serialised(local)  # type: ignore[assignment]
            except RuntimeError as exc:  # local mode: the folder is locked by another process
                raise VectorStoreUnavailable(f"cannot open Qdrant store {key}: {exc}") from exc
            _clients[key] = client
        return _clients[key]


@atexit.register
def _close_all() -> None:
    """Closes local clients before the interpreter tears modules down (their finaliser
    would fail then, noisily)."""
    with _clients_lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        client.close()


def release(settings: Settings) -> None:
    """Closes this process's client of the configured store (tests; a local path's lock)."""
    vs = settings.vector_store
    key = vs.url or f"path:{settings.qdrant_path.resolve()}"
    with _clients_lock:
        client = _clients.pop(key, None)
    if client is not None:
        client.close()


def _unreachable(exc: Exception) -> str | None:
    """Network and server errors (``guarded``)."""
    name = type(exc).__name__
    if name in ("ResponseHandlingException", "UnexpectedResponse", "RpcError") or (
        isinstance(exc, ConnectionError | TimeoutError)
    ):
        return f"Qdrant request failed: {exc}"
    return None


guarded = guard(_unreachable)  # a Qdrant call: ``VectorStoreUnavailable`` (503) when out of reach


# -- payloads ---------------------------------------------------------------------------------
def chunk_payload(chunk: Chunk) -> dict[str, Any]:
    """``f`` holds scalar metadata as text: filters compare as text, as the embedded store
    does, so chapter 1 and chapter "1" match alike."""
    flat = flat_metadata(chunk.metadata)
    return {
        "kind": PARENT if chunk.is_parent else CHILD,
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "position": chunk.position,
        "parent_id": chunk.parent_id,
        "text": chunk.text,
        "metadata": chunk.metadata,
        "f": flat,
    }


def to_chunk(payload: Mapping[str, Any] | None) -> Chunk:
    if payload is None:
        raise ValueError("a chunk point without payload")
    return Chunk(
        chunk_id=str(payload["chunk_id"]),
        doc_id=str(payload["doc_id"]),
        text=str(payload["text"]),
        position=int(payload["position"]),
        parent_id=payload.get("parent_id"),
        is_parent=payload["kind"] == PARENT,
        metadata=dict(payload.get("metadata") or {}),
    )


def kind_is(kind: str) -> Any:
    return models.FieldCondition(key="kind", match=models.MatchValue(value=kind))


def search_filter(filters: Mapping[str, Any] | None, base: Any = None) -> Any:
    """Children matching every filter: ``doc_id`` or a metadata key -> a value, a list of
    values, or ``Exclude`` (a ``must_not``: served by the store, no over-fetching). None
    without filters: only children carry the searched vectors, so no condition is needed (and
    local mode, which checks conditions point by point in Python, is much faster without).
    ``ExcludeResolved`` is resolved against ``base`` just before the query: a Qdrant
    collection has no snapshot to resolve it against, so this is as late as it can be."""
    filters = resolved(filters, base)
    if not any(not isinstance(v, Exclude) or v.values for v in (filters or {}).values()):
        return None
    must: list[Any] = [kind_is(CHILD)]
    must_not: list[Any] = []
    for key, value in sorted((filters or {}).items()):
        check_key(key)
        field = "doc_id" if key == "doc_id" else f"f.{key}"
        if isinstance(value, Exclude):
            if value.values:
                any_of = [as_text(v) for v in value.values]
                must_not.append(models.FieldCondition(key=field, match=models.MatchAny(any=any_of)))
            continue
        any_of = [as_text(v) for v in values_of(value)]
        must.append(models.FieldCondition(key=field, match=models.MatchAny(any=any_of)))
    return models.Filter(must=must, must_not=must_not or None)
