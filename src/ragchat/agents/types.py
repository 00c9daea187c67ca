"""What a conversation turn produces, shared by every agent, the engine, the CLI and the API."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ragchat.errors import ConfigError, RagchatError
from ragchat.types import Hit

Role = Literal["user", "assistant", "system"]


@dataclass(frozen=True)
class HistoryMessage:
    role: Role
    content: str
    agent: str | None = None


@dataclass(frozen=True)
class Citation:
    """One numbered source of a reply: ``[n]`` in the text refers to ``index`` n."""

    index: int
    chunk_id: str
    source: str
    title: str
    location: str  # "page 3", "Ibuprofen > Side effects", "00:01:02.800–00:01:58.500 (Dr. X)"
    score: float
    preview: str
    page: int | None = None
    section_path: tuple[str, ...] = ()
    start_ts: str | None = None
    end_ts: str | None = None
    speakers: tuple[str, ...] = ()
    chapter: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["section_path"] = list(self.section_path)
        data["speakers"] = list(self.speakers)
        return data


def citation_from_hit(hit: Hit, index: int, *, preview_chars: int = 240) -> Citation:
    md = hit.chunk.metadata
    text = " ".join((hit.chunk.text or "").split())
    chapter = md.get("chapter")
    return Citation(
        index=index,
        chunk_id=hit.chunk.chunk_id,
        source=str(md.get("source", "")),
        title=str(md.get("doc_title") or md.get("title") or ""),
        location=hit.chunk.location(),
        score=round(float(hit.score), 4),
        preview=text[:preview_chars] + ("…" if len(text) > preview_chars else ""),
        page=int(md["page"]) if "page" in md else None,
        section_path=tuple(md.get("heading_path") or ()),
        start_ts=md.get("start_ts"),
        end_ts=md.get("end_ts"),
        speakers=tuple(md.get("speakers") or ()),
        chapter=None if chapter is None else str(chapter),
    )


@dataclass
class TurnResult:
    """A finished turn. ``metadata`` carries routing (agent, reasoning, confidence), the
    reformulated query, retrieval attempts, confidence, the gate decision and per-step timings."""

    reply: str
    agent: str
    citations: list[Citation] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    bubbles: list[str] | None = None  # companion replies as several chat bubbles
    no_answer: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "reply": self.reply,
            "agent": self.agent,
            "citations": [c.to_dict() for c in self.citations],
            "metadata": self.metadata,
            "bubbles": self.bubbles,
            "no_answer": self.no_answer,
        }


class UnknownAgent(ConfigError):
    """A turn asked for an agent name the configuration does not declare."""


class InvalidMessage(RagchatError):
    """The user message is empty (or only whitespace)."""


@dataclass
class ConversationState:
    """What the caller loads before a turn. The database is the single source of truth: the
    engine never stores history; it returns the (possibly new) agent in
    ``TurnResult.metadata["assigned_agent"]`` for the caller to persist."""

    conversation_id: str
    assigned_agent: str | None = None
    history: list[HistoryMessage] = field(default_factory=list)  # recent messages, oldest first
    user_profile: dict[str, Any] = field(default_factory=dict)
    # Self-harm intent was seen earlier in this conversation (the store's crisis flag); the
    # engine reports ``metadata["conversation_crisis"]`` for the caller to persist.
    crisis: bool = False


@dataclass(frozen=True)
class TurnOptions:
    """Per-turn overrides: ``agent`` forces an agent (the OpenAI-compatible model field),
    ``chapter`` / ``selected_text`` select textbook modes, ``kb`` searches another knowledge
    base with the agent's settings."""

    agent: str | None = None
    chapter: str | None = None
    selected_text: str | None = None
    top_k: int | None = None
    kb: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# {"type": "metadata" | "token" | "citations" | "final", ...}; see ``ChatEngine.stream_turn``.
TurnEvent = dict[str, Any]
