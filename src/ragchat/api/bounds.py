"""One table of input bounds, used by every route that takes the field (docs/security.md,
"Limits"). A request past a bound is refused before any work: 422 from validation (or 413 for
a body over ``api.max_body_bytes``), never a 500 from a database that cannot hold the number,
nor seconds of embedding of a 900,000-character message.

Body fields use the ``Annotated`` types below; query and path parameters the ``Query``/``Path``
aliases. Knowledge-base names in a body (one name, or a list of at most ``MAX_KB_NAMES``) reuse
the folder-name rule of ``index.kb.validate_name``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from ragchat.errors import InvalidKnowledgeBaseName
from ragchat.vectorstores.names import validate_name

# -- text -------------------------------------------------------------------------------------
MAX_MESSAGE_CHARS = 8_000  # a chat message; each /v1 message's text
MAX_QUESTION_CHARS = 4_000  # /query and /api/query questions
MAX_CONTEXT_CHARS = 20_000  # selected text (selected-text-only mode)
MAX_TITLE_CHARS = 200  # conversation titles
MAX_NAME_CHARS = 100  # display names, API key names, agents, /v1 models and roles, chapters
MAX_ID_CHARS = 128  # conversation (session), job, document, chunk and key ids
MAX_SESSION_ID_CHARS = MAX_ID_CHARS  # a client-chosen session id (seed clients: user_<uuid>)
MAX_KB_NAME_CHARS = 64  # index.kb.validate_name: 1-64 of [A-Za-z0-9_.-]
MAX_KB_NAMES = 8  # knowledge bases named in one request
MAX_PASSWORD_CHARS = 1_024  # what a request may carry; auth.max_password_chars is the rule
# -- counts -----------------------------------------------------------------------------------
MAX_HISTORY_MESSAGES = 200  # /v1 messages in one request
MAX_CONTENT_PARTS = 64  # parts of one /v1 message's content list
MAX_TOP_K = 20
MAX_CONVERSATIONS_PAGE = 200
MAX_MESSAGES_PAGE = 500
MAX_OFFSET = 1_000_000  # list offsets
MAX_SEQ = 2**31 - 1  # message sequence numbers, chapter numbers


def _kb_name(value: str) -> str:
    try:
        return validate_name(value)
    except InvalidKnowledgeBaseName as exc:  # a validation error (422), not a server error
        raise ValueError(str(exc)) from None


def _not_blank(value: Any) -> Any:
    """ "" and "   " are one mistake with one answer (422 "The message is empty.")."""
    if isinstance(value, str) and not value.strip():
        raise PydanticCustomError("empty_message", "The message is empty.")
    return value


Message = Annotated[
    str, BeforeValidator(_not_blank), Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
]
Question = Annotated[str, Field(max_length=MAX_QUESTION_CHARS)]
SelectedText = Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)]
Title = Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
SessionId = Annotated[str, Field(min_length=1, max_length=MAX_SESSION_ID_CHARS)]
TopK = Annotated[int, Field(ge=1, le=MAX_TOP_K)]
ChapterNumber = Annotated[int, Field(ge=0, le=MAX_SEQ)]
KbName = Annotated[str, Field(min_length=1, max_length=MAX_KB_NAME_CHARS), AfterValidator(_kb_name)]
KbNames = Annotated[list[KbName], Field(min_length=1, max_length=MAX_KB_NAMES)]

# -- query and path parameters ------------------------------------------------------------------
IdPath = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
# A knowledge base named in a path: longer is 422, else ``check_kb_name`` says why (400).
KbNamePath = Annotated[str, Path(min_length=1, max_length=MAX_KB_NAME_CHARS)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
BeforeSeq = Annotated[
    int | None, Query(ge=1, le=MAX_SEQ, description="Page backwards from this seq.")
]


def text_chars(content: Any) -> int:
    """Characters of text in a /v1 message's content: a string, or a list of parts whose
    ``text`` fields count (other parts carry no text ragchat reads)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(p["text"])
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return 0
