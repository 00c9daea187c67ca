"""Knowledge-base names: one rule for every store, the API and the CLI (a name is also a
folder, a Qdrant collection suffix and a PostgreSQL row key)."""

from __future__ import annotations

import re

from ragchat.errors import InvalidKnowledgeBaseName

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def validate_name(name: str) -> str:
    """``name`` if it can name a knowledge base (it is a folder name), else
    ``InvalidKnowledgeBaseName``."""
    if not _NAME.match(name):
        raise InvalidKnowledgeBaseName(
            f"invalid knowledge base name {name!r}: knowledge base names are 1-64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name
