"""Request and response models of the replaced systems' contracts that ragchat's own models do
not already cover (see the README's "Coming from …" sections): the textbook ``/api/query``
(004) and the question-style turns of the safety-first medical server (003)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field

from ragchat.api.bounds import (
    ChapterNumber,
    Message,
    Name,
    Question,
    SelectedText,
    SessionId,
    TopK,
)
from ragchat.api.schemas import QUESTION, AgentName, ChatResponse


# -- 004: POST /api/query ---------------------------------------------------------------------
class TextbookQuery(BaseModel):
    question: Question
    context: SelectedText | None = None
    use_context_only: bool = False
    top_k: TopK = 5
    chapter_id: ChapterNumber | Name | None = Field(
        default=None, description="A chapter number or name."
    )


class RetrievedChunk(BaseModel):
    chunk_id: str
    chapter_id: int | None = Field(description="The chapter number, when the source has one.")
    section_id: str
    section_title: str
    preview_text: str
    relevance_score: float


class TextbookAnswer(BaseModel):
    answer: str
    sources: list[RetrievedChunk]
    query_time_ms: int
    mode: Literal["book-wide", "chapter-aware", "selected-text-only"]


# -- 003: a question in a conversation, streamed or not ---------------------------------------
class QuestionTurn(BaseModel):
    question: Message = Field(
        validation_alias=AliasChoices("question", "query", "message"),
        description=QUESTION,
    )
    conversation_id: SessionId | None = Field(
        default=None,
        validation_alias=AliasChoices("conversation_id", "session_id"),
        description="Continue this conversation of the caller's; omit to start one.",
    )
    agent: Name | None = AgentName


class QuestionAnswer(ChatResponse):
    """A chat turn's reply with the names the question-style clients read."""

    answer: str
    conversation_id: str
    sources: list[dict[str, Any]]
