"""Request and response models (they are the OpenAPI documentation at /docs). The models of
stored entities read the store's rows with ``model_validate`` (``from_attributes``): the public
subset of each row, nothing copied by hand."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from ragchat.api import bounds
from ragchat.api.bounds import (
    MAX_MESSAGE_CHARS,
    Message,
    Name,
    Question,
    SelectedText,
    SessionId,
    Title,
    TopK,
)
from ragchat.ingest.registry import SUPPORTED_SUFFIXES

QUESTION = "The question (``query`` is accepted as its other name)."
AgentName = Field(default=None, description="Force this agent (no routing).")
KbName = bounds.KbName
# One name, or a list of names ([] unbinds): the same bound as every list of knowledge bases.
KbChoice = KbName | Annotated[list[KbName], Field(max_length=bounds.MAX_KB_NAMES)]
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
    display_name: Name | None = None
    create_api_key: bool = Field(
        default=False, description="Named users only: also return a new API key (shown once)."
    )


class AnswerFrom(BaseModel):
    """What the page answers from: one knowledge base (``kb``), or the agents on the sample
    knowledge bases (``agent``: one of them, or null for the one that fits each question)."""

    kb: KbName | None = None
    agent: Name | None = None


class UserOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    kind: str = Field(description='"anonymous", "named" (POST /users) or "account".')
    display_name: str | None
    created_at: datetime
    username: str | None = Field(
        default=None,
        validation_alias=AliasChoices("login", "username"),
        description="An account's sign-in name.",
    )
    answer_from: AnswerFrom | None = Field(
        default=None, description="The page's last choice of what to answer from."
    )


class UserUpdate(BaseModel):
    answer_from: AnswerFrom | None = None
    display_name: Name | None = None


# -- accounts ---------------------------------------------------------------------------------
Password = Annotated[str, Field(min_length=1, max_length=bounds.MAX_PASSWORD_CHARS)]
Username = Annotated[str, Field(min_length=1, max_length=bounds.MAX_NAME_CHARS)]


class SignUp(BaseModel):
    username: Username
    password: Password
    display_name: Name | None = None
    claim: bool = Field(
        default=True,
        description="Make the caller's present identity (the page's cookie, or an API key's "
        "user) the account, keeping what it made.",
    )


class SignIn(BaseModel):
    username: Username
    password: Password
    claim: bool = Field(
        default=True,
        description="Move what the caller's present identity (the page's cookie before signing "
        "in, or an API key's user) made into the account.",
    )


class PasswordChange(BaseModel):
    current_password: Password
    new_password: Password


class ClaimedOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    conversations: int
    knowledge_bases: int
    api_keys: int


class SignedInOut(BaseModel):
    user: UserOut
    claimed: ClaimedOut


class AuthStatus(BaseModel):
    signed_in: bool = Field(description="A page session or an API key of an account.")
    user: UserOut | None = Field(description="The caller, when the request carries an identity.")
    sign_up: bool = Field(description="Whether anyone may create an account here.")
    anonymous: bool = Field(description="Whether the page may be used without an account.")


class ApiKeyCreate(BaseModel):
    name: Name = "default"


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
    session_id: SessionId | None = Field(
        default=None,
        description="Omit to start a new conversation; a new id (up to 128 characters) starts "
        "that one, private to an identified caller, else an anonymous session (which goes on "
        "under the same id after it ended).",
    )
    message: Message
    agent: Name | None = AgentName
    kb: KbChoice | None = Field(default=None, description=KB_FIELD)


class MessageCreate(BaseModel):
    message: Message
    agent: Name | None = AgentName
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
    session_id: SessionId


class EndSessionResponse(BaseModel):
    session_id: str
    status: str
    memory: Literal["indexing"] = "indexing"


# -- conversations ----------------------------------------------------------------------------
class ConversationCreate(BaseModel):
    title: Title | None = None
    kb: KbChoice | None = Field(default=None, description=KB_FIELD)


class ConversationRename(BaseModel):
    title: Title


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
    question: Question = Field(
        validation_alias=AliasChoices("question", "query"), description=QUESTION
    )
    context: SelectedText | None = Field(
        default=None, description="Selected text (selected-text-only mode)."
    )
    use_context_only: bool = False
    top_k: TopK | None = None
    chapter_id: Name | None = None
    kb: str | None = Field(default=None, max_length=bounds.MAX_KB_NAME_CHARS)


class SourceOut(BaseModel):
    index: int | None
    chunk_id: str | None
    title: str
    source: str
    chapter: str | None
    section: str
    location: str
    page: int | None
    slide: int | None = None
    sheet: str | None = None
    rows: list[int] | None = None  # first and last spreadsheet row of the passage
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
    name: KbName = Field(description="1-64 letters, digits, '.', '_' or '-'.")
    description: str = Field(default="", max_length=2000)
    default_agent: str | None = Field(
        default=None, max_length=100, description="The agent that answers over it."
    )


class KnowledgeBaseUpdate(BaseModel):
    name: KbName | None = Field(default=None, description="A new name.")
    description: str | None = Field(default=None, max_length=2000)
    default_agent: str | None = Field(
        default=None, max_length=100, description="The agent that answers over it; '' clears."
    )
    shared: bool | None = Field(
        default=None, description="true: everyone may see it and your documents in it."
    )


# -- OpenAI-compatible ------------------------------------------------------------------------
class OpenAIMessage(BaseModel):
    """A message's text (a string, or the ``text`` of its parts) is bounded like a chat
    message: ``bounds.MAX_MESSAGE_CHARS``."""

    model_config = ConfigDict(extra="allow")
    role: Name
    content: (
        str | Annotated[list[dict[str, Any]], Field(max_length=bounds.MAX_CONTENT_PARTS)] | None
    ) = None

    @model_validator(mode="after")
    def _bounded(self) -> OpenAIMessage:
        chars = bounds.text_chars(self.content)
        if chars > MAX_MESSAGE_CHARS:
            raise ValueError(
                f"a message's text is at most {MAX_MESSAGE_CHARS} characters (this one: {chars})"
            )
        return self


class OpenAIChatRequest(BaseModel):
    """The fields ragchat uses; sampling parameters and the rest are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: Name
    messages: list[OpenAIMessage] = Field(min_length=1, max_length=bounds.MAX_HISTORY_MESSAGES)
    stream: bool = False
