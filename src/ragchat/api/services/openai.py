"""The OpenAI Chat Completions protocol over the engine, so existing clients (the openai SDK,
Open WebUI, LibreChat) can use ragchat as a model.

Stateless by design: the request's earlier messages are the history, its last user message is
the turn, nothing is stored. Model "ragchat" is the supervisor (routing); every configured
agent is also a model, and so is every knowledge base the caller may see, as ``kb/<name>``
(answered by its knowledge-base agent, citing only its documents). The sources follow the
answer in ``content`` as a short numbered list (``sources_block``: most clients render only
``content``, where "[1]" would otherwise point at nothing) and travel in an extra
``citations`` field on the message (or on the last chunk when streaming). A request asking for
what ragchat cannot do (its own tools, a JSON response) is a 400 naming the field
(``refuse_unsupported``), never silently answered otherwise."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import anyio

from ragchat.agents.events import CitationsEvent, MetadataEvent, TokenEvent
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions
from ragchat.api.errors import ApiError, as_api_error
from ragchat.errors import InvalidKnowledgeBaseName
from ragchat.types import HistoryMessage

from ._sync import run_sync
from .chat import public_citation
from .engine_loop import Engine
from .knowledge_bases import KnowledgeBaseCatalogue

SUPERVISOR_MODEL = "ragchat"
OWNED_BY = "ragchat"
SOURCES_HEADER = "\n\nSources:\n"


def sources_block(citations: Sequence[dict[str, Any]]) -> str:
    """The reply's sources as chat clients show them under an answer; "" without any.
    ``[1] Ibuprofen — ibuprofen.md, Side effects``."""
    lines = []
    for c in citations:
        title = str(c.get("title") or "")
        location = str(c.get("location") or "").removeprefix(f"{title} > ") if title else ""
        where = ", ".join(str(p) for p in (c.get("source"), location or c.get("location")) if p)
        label = f"{title} — {where}" if title and title != c.get("source") else where or title
        lines.append(f"[{c.get('index')}] {label}")
    return SOURCES_HEADER + "\n".join(lines) if lines else ""


def without_sources(text: str) -> str:
    """An earlier reply sent back as history, without the sources list ``complete`` added."""
    head, found, tail = text.rpartition(SOURCES_HEADER)
    return head if found and tail.startswith("[") else text


# Fields ragchat cannot honour, with the values it can (what it does anyway).
_HONOURED: dict[str, Callable[[Any], bool]] = {
    "tools": lambda v: not v,  # its agents bring their own tools; none of the client's
    "functions": lambda v: not v,
    "tool_choice": lambda v: v in (None, "none", "auto"),
    "function_call": lambda v: v in (None, "none", "auto"),
    "response_format": lambda v: v is None or (isinstance(v, dict) and v.get("type") == "text"),
}


def refuse_unsupported(extra: dict[str, Any]) -> None:
    """400 naming the first field of the request ragchat would otherwise ignore although the
    client counts on it (its tools called, JSON back)."""
    for name, honoured in _HONOURED.items():
        if name in extra and not honoured(extra[name]):
            raise ApiError(
                400,
                "unsupported_parameter",
                f"'{name}' is not supported: ragchat's agents answer in text from their own "
                "documents and tools; send the request without it.",
            )


KB_MODEL_PREFIX = "kb/"


def model_ids(engine: Engine, kbs: Sequence[str] = ()) -> list[str]:
    """The supervisor, every agent, and ``kb/<name>`` for each knowledge base in ``kbs``."""
    return [SUPERVISOR_MODEL, *sorted(engine.agents), *(KB_MODEL_PREFIX + k for k in kbs)]


def models_payload(engine: Engine, created: int, kbs: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": m, "object": "model", "created": created, "owned_by": OWNED_BY}
            for m in model_ids(engine, kbs)
        ],
    }


def text_of(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content-part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return str(content)


def split_turn(messages: Sequence[tuple[str, Any]], keep: int) -> tuple[list[HistoryMessage], str]:
    """(history, the turn): the last message must be the user's; system and tool messages are
    dropped (agents bring their own prompts)."""
    if not messages or messages[-1][0] != "user":
        raise ApiError(400, "invalid_request", "The last message must have role 'user'.")
    turn = text_of(messages[-1][1]).strip()
    if not turn:
        raise ApiError(400, "invalid_request", "The last user message is empty.")
    history = [
        HistoryMessage(
            "user" if role == "user" else "assistant",
            text_of(content) if role == "user" else without_sources(text_of(content)),
        )
        for role, content in messages[:-1]
        if role in ("user", "assistant") and text_of(content).strip()
    ]
    return history[-keep:] if keep > 0 else [], turn


class OpenAIAdapter:
    """``kbs``: the knowledge bases offered as models ``kb/<name>`` (each caller sees the
    ones they may see); without it, only the agents are models."""

    def __init__(
        self, engine: Engine, history_turns: int, kbs: KnowledgeBaseCatalogue | None = None
    ) -> None:
        self.engine = engine
        self.keep = 2 * history_turns
        self.kbs = kbs

    def visible_models(self, user_id: str) -> list[str]:
        kbs = [] if self.kbs is None else [v.name for v in self.kbs.visible(user_id)]
        return model_ids(self.engine, kbs)

    def options_for(self, model: str, user_id: str = "") -> TurnOptions:
        if model == SUPERVISOR_MODEL:
            return TurnOptions()
        if model in self.engine.agents:
            return TurnOptions(agent=model)
        name = model.removeprefix(KB_MODEL_PREFIX)
        if model.startswith(KB_MODEL_PREFIX) and self.kbs is not None:
            try:
                view = self.kbs.find(user_id, name)
            except InvalidKnowledgeBaseName:
                view = None
            if view is not None:
                return TurnOptions(kbs=(view.storage,), kb_agent=view.default_agent)
        raise ApiError(
            404,
            "model_not_found",
            f"The model {model!r} does not exist; available: "
            f"{', '.join(self.visible_models(user_id))}.",
        )

    def _turn(
        self, model: str, messages: Sequence[tuple[str, Any]], user_id: str = ""
    ) -> TurnRequest:
        """The turn, validated by the engine (the protocol's own checks first: the last
        message the user's and not empty, the model known)."""
        options = self.options_for(model, user_id)
        history, message = split_turn(messages, self.keep)
        state = ConversationState(conversation_id=f"openai-{uuid.uuid4().hex}", history=history)
        request = TurnRequest(message, user_id=user_id, conversation=state, options=options)
        return self.engine.validate(request)

    async def complete(
        self, user_id: str, model: str, messages: Sequence[tuple[str, Any]]
    ) -> dict[str, Any]:
        request = await run_sync(self._turn, model, messages, user_id)
        result = await self.engine.run_turn(request)
        citations = [public_citation(c) for c in result.citations]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": result.reply + sources_block(citations),
                        "citations": citations,
                    },
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(messages, result.reply),
            "citations": citations,
            "agent": result.agent,
        }

    async def prepare_stream(
        self, model: str, messages: Sequence[tuple[str, Any]], user_id: str = ""
    ) -> TurnRequest:
        """Validates before the response starts, so errors are still plain HTTP errors."""
        return await run_sync(self._turn, model, messages, user_id)

    async def stream(
        self,
        user_id: str,
        model: str,
        prepared: TurnRequest,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """``chat.completion.chunk`` objects: the role, content deltas, then a last chunk with
        ``finish_reason`` and ``citations``; an ``{"error": ...}`` object on failure."""
        chunk_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
            return {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }

        yield chunk({"role": "assistant", "content": ""})
        events = self.engine.stream_turn(prepared)
        try:
            citations: list[dict[str, Any]] = []
            agent = ""
            async for event in events:
                if isinstance(event, MetadataEvent):
                    agent = event.agent
                elif isinstance(event, TokenEvent) and event.text:
                    yield chunk({"content": event.text})
                elif isinstance(event, CitationsEvent):
                    citations = [public_citation(c) for c in event.citations]
            if block := sources_block(citations):
                yield chunk({"content": block})
            yield chunk({}, "stop", citations=citations, agent=agent)
        except Exception as exc:
            err = as_api_error(exc)
            yield {"error": {"type": err.type, "message": err.message, "code": err.status}}
        finally:
            with anyio.CancelScope(shield=True):  # runs inside a cancelled scope on disconnect
                await events.aclose()


def _usage(messages: Sequence[tuple[str, Any]], reply: str) -> dict[str, int]:
    """Rough word counts: there is no tokenizer on the offline path."""
    prompt = sum(len(text_of(c).split()) for _, c in messages)
    completion = len(reply.split())
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
