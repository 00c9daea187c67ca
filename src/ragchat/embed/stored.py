"""An embedder that only names a model: for reading or copying stored vectors."""

from __future__ import annotations

from collections.abc import Sequence

from ragchat.embed.base import Matrix, Vector
from ragchat.errors import IndexStateError


class StoredVectorsOnly:
    """The embedder of a migration: it names the source's model (stores check it) and refuses
    to embed, so nothing is ever re-embedded by accident."""

    def __init__(self, model_name: str, dim: int) -> None:
        self.model_name = model_name
        self.dim = dim

    def embed_documents(self, texts: Sequence[str], *, progress: bool = False) -> Matrix:
        raise IndexStateError("a migration copies stored vectors; it never embeds")

    def embed_query(self, text: str) -> Vector:
        raise IndexStateError("a migration copies stored vectors; it never embeds")
