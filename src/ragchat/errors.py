"""One exception tree.

``api/`` maps these to HTTP codes and ``cli.py`` to exit codes; nothing else does."""

from __future__ import annotations


class RagchatError(Exception):
    """Root of every error ragchat raises on purpose."""


class ConfigError(RagchatError):
    """Settings or a config file are invalid."""


class IngestError(RagchatError):
    """A file could not be read or parsed. Carries the file so the user knows which one."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.reason = message


class IngestCancelled(RagchatError):
    """An ingestion was stopped at a safe point (the server is shutting down); nothing of it
    was saved. Not an ``IngestError``: no file is at fault."""


class DataDirInUse(RagchatError):
    """Another running ragchat server holds the data directory's lock."""


class PortInUse(RagchatError):
    """The server's address is taken (another server, or another program, listens there)."""


class UnsupportedFileError(IngestError):
    """No loader handles this file type."""


class InvalidInput(RagchatError):
    """Input that is malformed whatever is stored (a bad name, an empty message): the caller
    must change it, so the API answers 400, never 404."""


class InvalidKnowledgeBaseName(InvalidInput):
    """A knowledge base name that can never exist: 1-64 letters, digits, '.', '_' or '-',
    starting with a letter or digit (names are folder names, so nothing else is allowed)."""


class IndexStateError(RagchatError):
    """A persisted index is missing, corrupt, inconsistent with its manifest, or cannot be
    created in the state asked for (already exists, unknown backend)."""


class ModelMismatchError(IndexStateError):
    """The knowledge base was built with another embedding model than the one configured."""


class KnowledgeBaseNotFound(RagchatError):
    """The named knowledge base does not exist."""


class DocumentNotFound(RagchatError):
    """The document id is not in the knowledge base."""


class ModelLoadError(RagchatError):
    """A model (embedder, reranker, LLM) could not be loaded from its configured path or name."""


class RetrievalError(RagchatError):
    """A retrieval request is invalid (unknown mode, bad filter, empty query)."""


class LLMError(RagchatError):
    """The language model backend failed (unreachable, timed out, refused)."""


class LLMUnavailable(LLMError):
    """The backend cannot be reached or keeps failing after retries: the API answers 503."""


class LLMOutputError(LLMError):
    """The model answered, but not in the shape asked for (bad JSON, unknown tool)."""


class UnsafeInput(RagchatError):
    """The safety classifier refused a message; carries the category for logging."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category


class NotFound(RagchatError):
    """A stored record does not exist, or belongs to another user (the same error, on purpose)."""


class Conflict(RagchatError):
    """A write clashes with the stored state (duplicate id, closed conversation, finished
    message)."""


class StoreUnavailable(RagchatError):
    """The database cannot be reached or is locked: the API answers 503."""


class VectorStoreUnavailable(StoreUnavailable):
    """The vector store (a Qdrant server, or its client library) cannot be used right now."""
