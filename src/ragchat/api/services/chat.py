"""A chat turn against the store: load the conversation, store the user message (committed
before any model call), run or stream the engine, store the reply, keep the agent sticky.

Streaming stores the reply when the ``final`` event arrives; if the client goes away first,
the engine stream is closed (cancelling the model request) and the partial text is stored
with status ``interrupted``; a failure stores status ``failed`` and yields an ``error``."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from ragchat.agents.types import Citation, ConversationState, TurnOptions, TurnResult
from ragchat.api import context
from ragchat.api.errors import ApiError, as_api_error
from ragchat.settings import Settings
from ragchat.store.base import Store
from ragchat.store.rows import ConversationRow, MessageRow

from ._sync import run_sync
from .engine import Engine

log = logging.getLogger(__name__)

StreamEvent = tuple[str, dict[str, Any]]  # (SSE event name, JSON data)


def public_citation(citation: Citation | Mapping[str, Any]) -> dict[str, Any]:
    """A citation as clients see it: the file name, not the server's path to it."""
    data = citation.to_dict() if isinstance(citation, Citation) else dict(citation)
    if data.get("source"):
        data["source"] = Path(str(data["source"])).name
    return data


@dataclass
class PreparedTurn:
    user_id: str
    conversation: ConversationRow
    state: ConversationState
    message: str
    options: TurnOptions
    user_message: MessageRow
    first_exchange: bool


@dataclass
class TurnOutcome:
    result: TurnResult
    message: MessageRow
    citations: list[dict[str, Any]]


class ChatService:
    def __init__(self, settings: Settings, store: Store, engine: Engine) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine

    # -- preparing a turn ----------------------------------------------------------------------
    def check(self, message: str, agent: str | None) -> str:
        """Validation before anything is stored: the message text, the agent name."""
        text = message.strip()
        if not text:
            raise ApiError(400, "invalid_message", "The message is empty.")
        if agent is not None and agent not in self.engine.agents:
            known = ", ".join(sorted(self.engine.agents))
            raise ApiError(400, "unknown_agent", f"Unknown agent {agent!r}; configured: {known}.")
        return text

    def _prepare(
        self, user_id: str, conversation_id: str | None, message: str, agent: str | None
    ) -> PreparedTurn:
        text = self.check(message, agent)
        if conversation_id is None:
            conv = self.store.create_conversation(user_id)
        else:
            conv = self.store.get_conversation(user_id, conversation_id)
        history = self.store.recent_history(conv.id, self.settings.history_turns)
        profile = self._profile(user_id, conv.id) if history else {}
        user_message = self.store.add_user_message(conv.id, text)
        state = ConversationState(
            conversation_id=conv.id,
            assigned_agent=conv.assigned_agent,
            history=history,
            user_profile=profile,
            crisis=conv.crisis,
        )
        return PreparedTurn(
            user_id=user_id,
            conversation=conv,
            state=state,
            message=text,
            options=TurnOptions(agent=agent),
            user_message=user_message,
            first_exchange=not history and conv.title is None,
        )

    async def prepare(
        self, user_id: str, conversation_id: str | None, message: str, agent: str | None
    ) -> PreparedTurn:
        return await run_sync(self._prepare, user_id, conversation_id, message, agent)

    def _profile(self, user_id: str, conversation_id: str) -> dict[str, Any]:
        """The companion's profile facts, carried in the last assistant message's metadata."""
        recent = self.store.list_messages(user_id, conversation_id, limit=20)
        for m in reversed(recent):
            if m.role == "assistant" and isinstance(m.metadata.get("user_profile"), dict):
                return dict(m.metadata["user_profile"])
        return {}

    # -- finishing a turn ----------------------------------------------------------------------
    def _store_reply(
        self,
        turn: PreparedTurn,
        result: TurnResult,
        message_id: str | None,
        extra: Mapping[str, Any] | None = None,
    ) -> TurnOutcome:
        if message_id is None:
            message_id = self.store.begin_assistant_message(turn.conversation.id, result.agent).id
        citations = [public_citation(c) for c in result.citations]
        metadata = {
            **result.metadata,
            **(extra or {}),
            "no_answer": result.no_answer,
            "bubbles": result.bubbles,
        }
        row = self.store.finish_assistant_message(message_id, result.reply, citations, metadata)
        assigned = result.metadata.get("assigned_agent", turn.conversation.assigned_agent)
        if assigned != turn.conversation.assigned_agent:
            self.store.set_assigned_agent(turn.user_id, turn.conversation.id, assigned)
        if result.metadata.get("conversation_crisis") and not turn.conversation.crisis:
            self.store.flag_crisis(turn.user_id, turn.conversation.id)
        return TurnOutcome(result, row, citations)

    def _store_failure(self, turn: PreparedTurn, message_id: str | None, error: str) -> None:
        try:
            if message_id is None:
                message_id = self.store.begin_assistant_message(turn.conversation.id, None).id
            self.store.finish_assistant_message(
                message_id, "", metadata={"error": error}, status="failed"
            )
        except Exception:
            log.exception("could not record the failed turn")

    def _store_interrupted(self, turn: PreparedTurn, message_id: str | None, text: str) -> None:
        try:
            if message_id is None:
                message_id = self.store.begin_assistant_message(turn.conversation.id, None).id
            self.store.mark_interrupted(message_id, text)
        except Exception:
            log.exception("could not record the interrupted turn")

    # -- running -------------------------------------------------------------------------------
    async def run(self, turn: PreparedTurn) -> TurnOutcome:
        try:
            result = await self.engine.run_turn(
                conversation=turn.state,
                message=turn.message,
                user_id=turn.user_id,
                options=turn.options,
            )
        except Exception as exc:
            await run_sync(self._store_failure, turn, None, as_api_error(exc).type)
            raise
        context.note(agent=result.agent)
        return await run_sync(self._store_reply, turn, result, None)

    async def stream(self, turn: PreparedTurn) -> AsyncGenerator[StreamEvent, None]:
        """SSE events: metadata → token… → citations → final (or error)."""
        start = time.perf_counter()
        parts: list[str] = []
        message_id: str | None = None
        ttft: float | None = None
        settled = False
        events = self.engine.stream_turn(
            conversation=turn.state,
            message=turn.message,
            user_id=turn.user_id,
            options=turn.options,
        )
        try:
            async for event in events:
                kind = event.get("type")
                if kind == "metadata":
                    agent = str(event.get("agent") or "")
                    context.note(agent=agent)
                    if message_id is None:
                        row = await run_sync(
                            self.store.begin_assistant_message, turn.conversation.id, agent
                        )
                        message_id = row.id
                    yield (
                        "metadata",
                        {
                            "agent": agent,
                            "routing": event.get("routing", {}),
                            "session_id": turn.conversation.id,
                            "user_message_id": turn.user_message.id,
                        },
                    )
                elif kind == "token":
                    text = str(event.get("text") or "")
                    if ttft is None:
                        ttft = _first_token(start)
                    parts.append(text)
                    yield "token", {"text": text}
                elif kind == "citations":
                    cites = [public_citation(c) for c in event.get("citations", [])]
                    yield "citations", {"citations": cites}
                elif kind == "final":
                    result = _result(event["result"])
                    timings = {
                        **event.get("timings", {}),
                        "ttft_ms": ttft,
                        "server_total_ms": round((time.perf_counter() - start) * 1e3, 1),
                    }
                    outcome = await run_sync(
                        self._store_reply, turn, result, message_id, {"timings": timings}
                    )
                    settled = True
                    log.info("turn streamed", extra={"agent": result.agent, **timings})
                    yield "final", final_payload(turn, outcome, timings)
        except Exception as exc:
            err = as_api_error(exc)
            if err.type == "internal_error":
                log.exception("streamed turn failed")
            else:
                log.warning("streamed turn failed: %s: %s", err.type, exc)
            await run_sync(self._store_failure, turn, message_id, err.type)
            settled = True
            yield "error", {"type": err.type, "message": err.message}
        finally:
            # Shielded: on a disconnect this runs inside a cancelled scope.
            with anyio.CancelScope(shield=True):
                await aclose(events)  # cancels the graph and any model request in flight
                if not settled:  # the client went away: keep what was said so far
                    await run_sync(self._store_interrupted, turn, message_id, "".join(parts))
                    log.info("client disconnected mid-stream; stored the partial reply")

    # -- titles --------------------------------------------------------------------------------
    async def auto_title(self, turn: PreparedTurn, reply: str) -> None:
        """After the first exchange (BackgroundTasks): a title unless the user set one."""
        if not turn.first_exchange:
            return
        try:
            title = await self.engine.title(turn.message, reply)
            conv = await run_sync(self.store.get_conversation, turn.user_id, turn.conversation.id)
            if conv.title is None and title:
                await run_sync(self.store.rename, turn.user_id, conv.id, title)
        except Exception:
            log.warning("auto-title failed", exc_info=True)

    async def regenerate_title(self, user_id: str, conversation_id: str) -> ConversationRow:
        messages = await run_sync(self.store.list_messages, user_id, conversation_id, 1000)
        first_user = next((m.content for m in messages if m.role == "user" and m.content), None)
        if first_user is None:
            raise ApiError(409, "conflict", "The conversation has no messages to title yet.")
        first_reply = next((m.content for m in messages if m.role == "assistant" and m.content), "")
        title = await self.engine.title(first_user, first_reply)
        return await run_sync(self.store.rename, user_id, conversation_id, title)


def final_payload(
    turn: PreparedTurn, outcome: TurnOutcome, timings: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    result = outcome.result
    return {
        "session_id": turn.conversation.id,
        "message_id": outcome.message.id,
        "agent": result.agent,
        "reply": result.reply,
        "citations": outcome.citations,
        "no_answer": result.no_answer,
        "bubbles": result.bubbles,
        "metadata": outcome.message.metadata,
        "timings": dict(timings or result.metadata.get("timings", {})),
    }


def _result(data: Mapping[str, Any]) -> TurnResult:
    """``TurnResult.to_dict()`` back into a result (citations stay plain dicts)."""
    return TurnResult(
        reply=str(data.get("reply", "")),
        agent=str(data.get("agent", "")),
        citations=list(data.get("citations", [])),
        metadata=dict(data.get("metadata", {})),
        bubbles=data.get("bubbles"),
        no_answer=bool(data.get("no_answer", False)),
    )


async def aclose(iterator: AsyncIterator[Any]) -> None:
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()


def _first_token(start: float) -> float:
    ttft = round((time.perf_counter() - start) * 1000.0, 1)
    ctx = context.current()
    if ctx is not None:
        ctx.ttft_ms = ttft
    log.info("first token", extra={"ttft_ms": ttft})
    return ttft
