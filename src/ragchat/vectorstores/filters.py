"""What a search filter means, written once for every backend: ``doc_id`` or a metadata key →
a value, a list of values, ``Exclude`` (leave these out) or ``ExcludeResolved`` (an
``Exclude`` worked out against the state being searched). Metadata compare as text, so
chapter 1 and chapter "1" match alike in every store. Each backend turns the resolved filters
into its own query (SQL on SQLite or PostgreSQL, a Qdrant filter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragchat.types import Exclude, ExcludeResolved


def as_text(value: Any) -> str:
    """The one text form a filter value and a stored metadata value are compared in."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def check_key(key: str) -> None:
    """A metadata key goes into a query (a JSON path, a payload field): letters, digits and
    ``_`` only."""
    if key != "doc_id" and not key.replace("_", "").isalnum():
        raise ValueError(f"invalid filter key {key!r}")


def values_of(value: Any) -> list[Any]:
    """A filter's accepted values: a list (tuple, set) as it is, anything else alone."""
    return list(value) if isinstance(value, list | tuple | set | frozenset) else [value]


def flat_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """A chunk's scalar metadata as text under keys a filter may name: what a store that
    cannot compare JSON values as text (Qdrant, pgvector) keeps beside the chunk."""
    return {
        k: as_text(v)
        for k, v in metadata.items()
        if isinstance(v, str | int | float | bool) and k.replace("_", "").isalnum()
    }


def resolved(filters: Mapping[str, Any] | None, base: Any) -> dict[str, Any]:
    """``filters`` with each ``ExcludeResolved`` worked out against ``base``, the state the
    search runs on (as late as possible: uploads race with queries)."""
    return {
        k: v.against(base) if isinstance(v, ExcludeResolved) else v
        for k, v in (filters or {}).items()
    }


def without_empty(filters: Mapping[str, Any]) -> dict[str, Any]:
    """An ``Exclude`` of nothing restricts nothing."""
    return {k: v for k, v in filters.items() if not isinstance(v, Exclude) or v.values}
