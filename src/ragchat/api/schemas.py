"""Request and response models (they are the OpenAPI documentation at /docs). The models of
stored entities read the store's rows with ``model_validate`` (``from_attributes``): the public
subset of each row, nothing copied by hand."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StringConstraints

from ragchat.ingest.registry import SUPPORTED_SUFFIXES

MAX_MESSAGE_CHARS = 8000
QUESTION = "The question (``query`` is accepted as its other name)."
AgentName = Field(default=None, max_length=100, description="Force this agent (no routing).")
MAX_BOUND_KBS = 8
KB_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
KbName = Annotated[str, StringConstraints(pattern=KB_NAME)]
KbChoice = KbName | Annotated[list[KbName], Field(max_length=MAX_BOUND_KBS)]
KB_FIELD = (
    "Bind the conversation to this knowledge base (a name, or a list of up to 8): its replies "
    "cite only those documents. Kept for the follow-ups; give it again to change it, [] to "
    "unbind."
)


def kb_list(kb: KbChoice | None) -> list[str] | None:
    """The ``kb`` field as a list (None: not given, keep what the conversation has)."""
    if kb is None:
        return None
    return [kb] if isinstance(kb, str) else list(kb)


class ErrorDetail(BaseModel):
    type: str
    message: str
    request_id: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail
    detail: str = Field(description="The message again, where FastAPI clients read it.")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422, 429, 503)
}


# -- users ------------------------------------------------------------------------------------
class UserCreate(BaseModel):
    display_name: str | None = Field(default=None, max_length=100)
    create_api_key: bool = Field(
        default=False, description="Named users only: also return a new API key (shown once)."
    )


class UserOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    kind: str
    display_name: str | None
    created_at: datetime


class ApiKeyCreate(BaseModel):
    name: str = Field(default="default", min_length=1, max_length=100)


class ApiKeyOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ApiKeyCreated(ApiKeyOut):
    secret: str = Field(description="The key itself: shown once, store it now.")


class UserCreated(UserOut):
    api_key: ApiKeyCreated | None = None


# -- chat -------------------------------------------------------------------------------------
class ChatRequest(BaseModel):
    session_id: str | None = Field(
        default=None,
        max_length=100,
        description="Omit to start a new conversation; a new id (up to 36 characters) starts "
        "that one, private to an identified caller, else an anonymous session.",
    )
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    agent: str | None = AgentName
    kb: KbChoice | None = Field(default=None, description=KB_FIELD)


class MessageCreate(BaseModel):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    agent: str | None = AgentName
    kb: KbChoice | None = Field(default=None, description=KB_FIELD)


class ChatResponse(BaseModel):
    session_id: str
    message_id: str
    message: str = Field(description="The assistant's reply.")
    agent: str
    citations: list[dict[str, Any]]
    no_answer: bool = False
    bubbles: list[str] | None = None
    messages: list[str] = Field(
        default_factory=list,
        description="The reply as chat bubbles (the companion's several, else the reply).",
    )
    metadata: dict[str, Any]


class EndSessionRequest(BaseModel):
    session_id: str = Field(min_length=1, max_length=100)


class EndSessionResponse(BaseModel):
    session_id: str
    status: str
    memory: Literal["indexing"] = "indexing"


# -- conversations ----------------------------------------------------------------------------
class ConversationCreate(BaseModel):
    title: str | None = Field(default=None, max_length=200)
    kb: KbChoice | None = Field(default=None, description=KB_FIELD)


class ConversationRename(BaseModel):
    title: str = Field(min_length=1, max_length=200)


class ConversationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    title: str | None
    assigned_agent: str | None
    status: str
    created_at: datetime
    updated_at: datetime
    last_activity_at: datetime
    crisis: bool = Field(
        default=False,
        description="Self-harm intent was seen in this conversation: show crisis resources.",
    )
    kb: list[str] = Field(
        default_factory=list, description="The knowledge bases the conversation is bound to."
    )


class MessageOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    seq: int
    role: str
    content: str
    agent: str | None
    status: str
    citations: list[dict[str, Any]]
    metadata: dict[str, Any]
    created_at: datetime


# -- query ------------------------------------------------------------------------------------
class QueryRequest(BaseModel):
    question: str = Field(
        max_length=4000, validation_alias=AliasChoices("question", "query"), description=QUESTION
    )
    context: str | None = Field(
        default=None, max_length=20000, description="Selected text (selected-text-only mode)."
    )
    use_context_only: bool = False
    top_k: int | None = Field(default=None, ge=1, le=20)
    chapter_id: str | None = Field(default=None, max_length=100)
    kb: str | None = Field(default=None, max_length=64)


class SourceOut(BaseModel):
    index: int | None
    chunk_id: str | None
    title: str
    source: str
    chapter: str | None
    section: str
    location: str
    page: int | None
    preview: str
    score: float | None


class QueryResponse(BaseModel):
    answer: str
    sources: list[SourceOut]
    query_time_ms: float
    mode: Literal["book-wide", "chapter-aware", "selected-text-only"]
    agent: str
    kb: str | None
    no_answer: bool
    metadata: dict[str, Any]


# -- documents and jobs -----------------------------------------------------------------------
class JobAccepted(BaseModel):
    job_id: str
    kb: str
    status: str
    files: list[str]


class JobOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    kb: str
    status: str
    progress: float
    total: int | None
    done: int
    message: str
    result: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


class DocumentOut(BaseModel):
    doc_id: str
    title: str
    file: str
    kind: str
    chunks: int
    sections: int
    added_at: str
    shared: bool = Field(description="True for documents nobody owns (samples, CLI-ingested).")


class PassageOut(BaseModel):
    """The whole cited passage (a citation carries only a preview) and its parent section."""

    chunk_id: str
    kb: str
    text: str
    context: str | None = Field(
        default=None, description="The larger parent passage the chunk sits in, when different."
    )
    title: str
    file: str
    location: str


class KnowledgeBaseOut(BaseModel):
    name: str
    documents: int | None = None
    chunks: int | None = None
    configured: bool = False
    description: str = ""
    owned: bool = Field(default=False, description="The caller created it (and may change it).")
    shared: bool = Field(default=True, description="Everyone may see it and its owner's files.")
    default_agent: str | None = None
    created_at: datetime | None = None
    # The file suffixes an upload may have (every knowledge base reads the same formats).
    file_types: list[str] = Field(default_factory=lambda: list(SUPPORTED_SUFFIXES))


class KnowledgeBaseDetail(KnowledgeBaseOut):
    files: list[DocumentOut] = Field(
        default_factory=list, description="Its documents the caller may see, newest first."
    )


class KnowledgeBaseCreate(BaseModel):
    name: str = Field(pattern=KB_NAME, description="1-64 letters, digits, '.', '_' or '-'.")
    description: str = Field(default="", max_length=2000)
    default_agent: str | None = Field(
        default=None, max_length=100, description="The agent that answers over it."
    )


class KnowledgeBaseUpdate(BaseModel):
    name: str | None = Field(default=None, pattern=KB_NAME, description="A new name.")
    description: str | None = Field(default=None, max_length=2000)
    default_agent: str | None = Field(
        default=None, max_length=100, description="The agent that answers over it; '' clears."
    )
    shared: bool | None = Field(
        default=None, description="true: everyone may see it and your documents in it."
    )


# -- OpenAI-compatible ------------------------------------------------------------------------
class OpenAIMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None


class OpenAIChatRequest(BaseModel):
    """The fields ragchat uses; sampling parameters and the rest are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(max_length=100)
    messages: list[OpenAIMessage] = Field(min_length=1, max_length=200)
    stream: bool = False
