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


class UnsupportedFileError(IngestError):
    """No loader handles this file type."""


class IndexError_(RagchatError):
    """A persisted index is missing, corrupt or inconsistent with its manifest."""


class ModelMismatchError(IndexError_):
    """The knowledge base was built with another embedding model than the one configured."""


class KnowledgeBaseNotFound(RagchatError):
    """The named knowledge base does not exist."""


class DocumentNotFound(RagchatError):
    """The document id is not in the knowledge base."""


class ModelLoadError(RagchatError):
    """A model (embedder, reranker, LLM) could not be loaded from its configured path or name."""


class RetrievalError(RagchatError):
    """A retrieval request is invalid (unknown mode, bad filter, empty query)."""
